// otlpcheck decodes kestrel's OTLP profiles export with the official generated types
// (go.opentelemetry.io/proto/otlp, profiles/v1development) and checks it against
// kestrel's own folded export and the raw profile's sample times; with -push it sends
// the request to an OTLP/gRPC profiles receiver.
//
//	otlpcheck -otlp F.otlp.pb -folded F.folded -raw RAW.json [-push HOST:PORT]
//	otlpcheck -otlp F.otlp.pb     (decoding and the dictionary's checks alone)
//	otlpcheck … -shifted OUT      also writes the cpu/nanoseconds stacks as Parca v0.28.0
//	                              names their frames (function_table[function_index - 1])
//
// Prints what it compared; exits 1 on the first mismatch.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	collector "go.opentelemetry.io/proto/otlp/collector/profiles/v1development"
	pb "go.opentelemetry.io/proto/otlp/profiles/v1development"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"
)

func fail(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "otlpcheck: "+format+"\n", a...)
	os.Exit(1)
}

// folded reads "root;f1;...;leaf N" lines, keyed without the thread root.
func folded(path string) map[string]int64 {
	data, err := os.ReadFile(path)
	if err != nil {
		fail("%v", err)
	}
	out := map[string]int64{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		sp := strings.LastIndexByte(line, ' ')
		n, err := strconv.ParseInt(line[sp+1:], 10, 64)
		if err != nil {
			fail("folded line %q", line)
		}
		stack := line[:sp]
		if i := strings.IndexByte(stack, ';'); i >= 0 {
			stack = stack[i+1:]
		} else {
			stack = ""
		}
		out[stack] += n
	}
	return out
}

// rawTimes reads the raw profile's chunks: the absolute times of its running samples.
func rawTimes(path string) []uint64 {
	f, err := os.Open(path)
	if err != nil {
		fail("%v", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.UseNumber()
	var start uint64
	var times []uint64
	for {
		var chunk struct {
			Start   json.Number     `json:"start_unix_ns"`
			Samples [][]json.Number `json:"samples"`
		}
		if err := dec.Decode(&chunk); err == io.EOF {
			break
		} else if err != nil {
			fail("raw %s: %v", path, err)
		}
		if chunk.Start != "" && start == 0 {
			v, _ := strconv.ParseUint(string(chunk.Start), 10, 64)
			start = v
		}
		for _, row := range chunk.Samples {
			t, _ := strconv.ParseUint(string(row[0]), 10, 64)
			state, _ := strconv.Atoi(string(row[3]))
			if state == 0 {
				times = append(times, start+t)
			}
		}
	}
	return times
}

func main() {
	otlpPath := flag.String("otlp", "", "kestrel export --format otlp output")
	foldedPath := flag.String("folded", "", "kestrel export --format folded --sample-type samples output")
	rawPath := flag.String("raw", "", "the raw CPU profile (JSON)")
	push := flag.String("push", "", "an OTLP/gRPC receiver to send the request to")
	shifted := flag.String("shifted", "", "write the cpu/nanoseconds stacks, folded, with each frame named "+
		"function_table[function_index - 1], as Parca v0.28.0 reads them")
	flag.Parse()

	data, err := os.ReadFile(*otlpPath)
	if err != nil {
		fail("%v", err)
	}
	var req collector.ExportProfilesServiceRequest
	if err := proto.Unmarshal(data, &req); err != nil {
		fail("not an ExportProfilesServiceRequest: %v", err)
	}
	d := req.Dictionary
	if d == nil {
		fail("no dictionary")
	}
	// entry 0 of every table is its zero value
	if len(d.StringTable) == 0 || d.StringTable[0] != "" || len(d.MappingTable) == 0 ||
		!proto.Equal(d.MappingTable[0], &pb.Mapping{}) || len(d.LocationTable) == 0 ||
		!proto.Equal(d.LocationTable[0], &pb.Location{}) || len(d.FunctionTable) == 0 ||
		!proto.Equal(d.FunctionTable[0], &pb.Function{}) || len(d.StackTable) == 0 ||
		!proto.Equal(d.StackTable[0], &pb.Stack{}) || len(d.AttributeTable) == 0 ||
		!proto.Equal(d.AttributeTable[0], &pb.KeyValueAndUnit{}) || len(d.LinkTable) == 0 {
		fail("a dictionary table does not start with its zero value")
	}
	fmt.Printf("dictionary: %d strings, %d mappings, %d locations, %d functions, %d stacks, %d attributes\n",
		len(d.StringTable), len(d.MappingTable), len(d.LocationTable), len(d.FunctionTable),
		len(d.StackTable), len(d.AttributeTable))
	str := func(i int32) string {
		if i < 0 || int(i) >= len(d.StringTable) {
			fail("string index %d out of range", i)
		}
		return d.StringTable[i]
	}
	if len(req.ResourceProfiles) != 1 {
		fail("%d resource profiles, want 1 (one process)", len(req.ResourceProfiles))
	}
	rp := req.ResourceProfiles[0]
	attrs := map[string]string{}
	for _, kv := range rp.Resource.GetAttributes() {
		if v := kv.Value.GetStringValue(); v != "" {
			attrs[kv.Key] = v
		} else {
			attrs[kv.Key] = strconv.FormatInt(kv.Value.GetIntValue(), 10)
		}
	}
	fmt.Printf("resource: %v\n", attrs)
	required := []string{"process.pid", "process.executable.name", "process.executable.path", "host.name", "host.arch", "os.type"}
	if *foldedPath == "" { // any input: a pprof file may not know its process
		required = []string{"host.name"}
	}
	for _, k := range required {
		if attrs[k] == "" {
			fail("resource attribute %s missing", k)
		}
	}
	if len(rp.ScopeProfiles) != 1 || rp.ScopeProfiles[0].Scope.GetName() != "kestrel" {
		fail("want one scope, kestrel")
	}
	var counts, cpu *pb.Profile
	for _, p := range rp.ScopeProfiles[0].Profiles {
		t := str(p.SampleType.TypeStrindex) + "/" + str(p.SampleType.UnitStrindex)
		fmt.Printf("profile %s: %d samples, period %d %s/%s, original payload %q %d bytes\n", t,
			len(p.Samples), p.Period, str(p.PeriodType.GetTypeStrindex()), str(p.PeriodType.GetUnitStrindex()),
			p.OriginalPayloadFormat, len(p.OriginalPayload))
		if t == "samples/count" {
			counts = p
		}
		if t == "cpu/nanoseconds" {
			cpu = p
		}
	}
	// samples of a guessed stack (docs/exports.md), running and waiting
	if counts != nil {
		guessed := map[string]int64{}
		for _, s := range counts.Samples {
			var g bool
			state := ""
			for _, ai := range s.AttributeIndices {
				kv := d.AttributeTable[ai]
				switch str(kv.KeyStrindex) {
				case "kestrel.stack":
					g = kv.Value.GetStringValue() == "guessed"
				case "kestrel.state":
					state = kv.Value.GetStringValue()
				}
			}
			if g {
				for _, v := range s.Values {
					guessed[state] += v
				}
			}
		}
		fmt.Printf("kestrel.stack=guessed: %d running, %d waiting\n", guessed["running"], guessed["waiting"])
	}
	if *foldedPath == "" { // decoding and the dictionary's checks alone
		return
	}
	if counts == nil {
		fail("no samples/count profile")
	}
	if len(rp.ScopeProfiles[0].Profiles[0].OriginalPayload) < 2 ||
		rp.ScopeProfiles[0].Profiles[0].OriginalPayload[0] != 0x1f {
		fail("the first profile has no gzip'd pprof as original payload")
	}

	// stacks by function names, root first, as folded writes them
	got := map[string]int64{}
	var times []uint64
	start, end := counts.TimeUnixNano, counts.TimeUnixNano+counts.DurationNano
	for _, s := range counts.Samples {
		st := d.StackTable[s.StackIndex]
		var names []string
		for _, li := range st.LocationIndices {
			loc := d.LocationTable[li]
			for _, ln := range loc.Lines { // innermost first
				names = append(names, strings.ReplaceAll(str(d.FunctionTable[ln.FunctionIndex].NameStrindex), ";", "\uFFFD"))
			}
		}
		for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
		}
		if len(s.Values) != len(s.TimestampsUnixNano) {
			fail("a sample has %d values and %d timestamps", len(s.Values), len(s.TimestampsUnixNano))
		}
		var n int64
		for _, v := range s.Values {
			n += v
		}
		got[strings.Join(names, ";")] += n
		for _, ts := range s.TimestampsUnixNano {
			if ts < start || ts > end {
				fail("timestamp %d outside the profile's [%d, %d]", ts, start, end)
			}
		}
		times = append(times, s.TimestampsUnixNano...)
		var thread bool
		for _, ai := range s.AttributeIndices {
			if str(d.AttributeTable[ai].KeyStrindex) == "thread.name" {
				thread = true
			}
		}
		if !thread {
			fail("a sample without thread.name")
		}
	}
	want := folded(*foldedPath)
	var total int64
	for k, v := range want {
		total += v
		if got[k] != v {
			fail("stack %q: %d samples in OTLP, %d in folded", k, got[k], v)
		}
	}
	for k, v := range got {
		if want[k] != v {
			fail("stack %q: %d samples in OTLP, %d in folded", k, v, want[k])
		}
	}
	fmt.Printf("stacks: %d, samples: %d, equal to the folded export\n", len(want), total)

	raw := rawTimes(*rawPath)
	sort.Slice(raw, func(i, j int) bool { return raw[i] < raw[j] })
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	if len(raw) != len(times) {
		fail("%d timestamps in OTLP, %d running samples in the raw profile", len(times), len(raw))
	}
	for i := range raw {
		if raw[i] != times[i] {
			fail("timestamp %d: %d in OTLP, %d in the raw profile", i, times[i], raw[i])
		}
	}
	fmt.Printf("timestamps: %d, equal to the raw profile's running samples\n", len(times))

	if *shifted != "" {
		if cpu == nil {
			fail("no cpu/nanoseconds profile")
		}
		writeShifted(*shifted, d, cpu, str)
	}

	if *push != "" {
		conn, err := grpc.NewClient(*push, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			fail("%v", err)
		}
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		resp, err := collector.NewProfilesServiceClient(conn).Export(ctx, &req)
		if err != nil {
			fail("push to %s: %v", *push, err)
		}
		if ps := resp.GetPartialSuccess(); ps != nil && ps.RejectedProfiles > 0 {
			fail("push to %s: %d profiles rejected: %s", *push, ps.RejectedProfiles, ps.ErrorMessage)
		}
		fmt.Printf("pushed to %s: accepted\n", *push)
	}
}

// writeShifted writes p's stacks as "root;…;leaf VALUE" lines (summed per stack) with
// each frame named as Parca v0.28.0 names it: pkg/profile/encode.go reads a line's
// function as funcs[line.FunctionIndex-1] of the whole function_table, entry 0 (the
// zero value, no name) included, so a frame gets the name of the entry before its own.
func writeShifted(path string, d *pb.ProfilesDictionary, p *pb.Profile, str func(int32) string) {
	out := map[string]int64{}
	for _, s := range p.Samples {
		var names []string
		for _, li := range d.StackTable[s.StackIndex].LocationIndices {
			for _, ln := range d.LocationTable[li].Lines {
				if ln.FunctionIndex == 0 {
					fail("a line with no function")
				}
				names = append(names, strings.ReplaceAll(str(d.FunctionTable[ln.FunctionIndex-1].NameStrindex), ";", "\uFFFD"))
			}
		}
		for i, j := 0, len(names)-1; i < j; i, j = i+1, j-1 {
			names[i], names[j] = names[j], names[i]
		}
		for _, v := range s.Values {
			out[strings.Join(names, ";")] += v
		}
	}
	var b strings.Builder
	for k, v := range out {
		fmt.Fprintf(&b, "%s %d\n", k, v)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		fail("%v", err)
	}
}
