/* STEM.profile.json (docs/exports.md, "profile.json") read into what the editor shows:
 * the heat of each source line and the status-bar summary. No vscode here, so the
 * unit tests run it under node. */

export interface Share {
    value: number;
    samples: number;
    share: number;
    se: number;
    significant: boolean;
}

export interface SummaryLine {
    function: string | null;
    file: string | null;
    line: number;
    self: Share;
    total: Share;
}

export interface Summary {
    format: 'kestrel-summary';
    version: number;
    kind: 'cpu' | 'heap';
    sample_type: { type: string; unit: string };
    totals: { value: number; samples: number; wall_ns: number; rate_hz: number; period: number; engine: string | null; threads: number };
    states?: { running: Share; waiting: Share };
    lines: SummaryLine[];
}

/* One decorated line: 0-based for the editor, with the text shown after it. */
export interface LineHeat {
    line: number;
    share: number;
    samples: number;
    se: number;
    text: string;
    hover: string;
}

/* Below this many samples the shares are too noisy to steer by (a 10% line at 100
 * samples has a standard error of 3 points); the same bar as the terminal report's
 * "low confidence" line. */
export const MIN_SAMPLES = 100;

export function parseSummary(text: string): Summary {
    let d: unknown;
    try {
        d = JSON.parse(text);
    } catch (e) {
        throw new Error('not JSON: ' + (e as Error).message);
    }
    const s = d as Summary;
    if (!s || typeof s !== 'object' || s.format !== 'kestrel-summary')
        throw new Error('not a kestrel profile.json (no "format": "kestrel-summary")');
    if (s.version !== 1) throw new Error('profile.json version ' + String(s.version) + ', this extension reads version 1');
    if (!Array.isArray(s.lines) || !s.totals) throw new Error('profile.json without "lines" or "totals"');
    return s;
}

/* How many sampled events the shares rest on. A CPU profile's samples; a heap
 * profile's samples are its distinct stacks, each of many sampled allocations, so its
 * count is the bytes over the sampling interval (never fewer than the stacks), as the
 * terminal report counts them ("about N sampled allocations"). */
export function events(s: Summary): number {
    const t = s.totals;
    if (s.kind === 'heap' && s.sample_type.unit === 'bytes' && /_space$/.test(s.sample_type.type) && t.period > 0)
        return Math.max(t.value / t.period, t.samples);
    return t.samples;
}

export function bytes(v: number): string {
    const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
    let k = 0;
    while (k < units.length - 1 && Math.abs(v) >= 1024 ** (k + 1)) k++;
    const x = v / 1024 ** k;
    return x.toFixed(k === 0 || Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2) + ' ' + units[k];
}

export function percent(p: number): string {
    return (p * 100).toFixed(1) + '%';
}

/* The standard error is shown where it is large relative to the share: above a fifth
 * of it, or when the share does not clear two standard errors. */
export function seIsLarge(s: Share): boolean {
    return !s.significant || s.se > s.share / 5;
}

/* "NN.N% · M samples"; of a heap profile, whose samples are stacks, the bytes instead
 * ("NN.N% · 72.0 MiB"), as the viewer's source pane writes it. */
export function heatText(s: Share, unit: string): string {
    const what = unit === 'bytes' ? bytes(s.value) : s.samples === 1 ? '1 sample' : s.samples + ' samples';
    return percent(s.share) + (seIsLarge(s) ? ' ±' + (s.se * 100).toFixed(1) : '') + ' · ' + what;
}

/* The lines of one source file, keyed by the path the profile names; `same` says
 * whether a profile path is that file (paths.ts decides). Several entries of one line
 * (inlined functions, two functions on a line) add up. */
export function heatForFile(s: Summary, same: (profilePath: string) => boolean): LineHeat[] {
    const byLine = new Map<number, { value: number; samples: number; share: number; var: number; fns: string[]; sig: boolean }>();
    for (const l of s.lines) {
        if (!l.file || l.line <= 0 || !l.self || l.self.samples <= 0 || !same(l.file)) continue;
        const cur = byLine.get(l.line) || { value: 0, samples: 0, share: 0, var: 0, fns: [], sig: false };
        cur.value += l.self.value;
        cur.samples += l.self.samples;
        cur.share += l.self.share;
        cur.var += l.self.se * l.self.se;
        cur.sig = cur.sig || l.self.significant;
        if (l.function) cur.fns.push(l.function);
        byLine.set(l.line, cur);
    }
    const out: LineHeat[] = [];
    for (const [line, c] of byLine) {
        /* The summed share's error: sqrt(p(1-p)/n) of the sum, as the profile's own. */
        const n = events(s);
        const se = n > 0 ? Math.sqrt((c.share * (1 - c.share)) / n) : Math.sqrt(c.var);
        const sh: Share = { value: c.value, samples: c.samples, share: c.share, se, significant: c.sig || c.share > 2 * se };
        out.push({
            line: line - 1,
            share: c.share,
            samples: c.samples,
            se,
            text: heatText(sh, s.sample_type.unit),
            hover: 'kestrel: ' + percent(c.share) + ' ±' + (se * 100).toFixed(1) + ' self of ' + s.sample_type.type +
                ' (' + c.samples + ' of ' + s.totals.samples + (s.kind === 'heap' ? ' stacks' : ' samples') + ')' +
                (c.fns.length ? ' in ' + c.fns.join(', ') : ''),
        });
    }
    return out.sort((a, b) => a.line - b.line);
}

/* The files the profile has heat in, hottest first. */
export function hotFiles(s: Summary): string[] {
    const by = new Map<string, number>();
    for (const l of s.lines) if (l.file && l.self && l.self.samples > 0) by.set(l.file, (by.get(l.file) || 0) + l.self.share);
    return [...by.entries()].sort((a, b) => b[1] - a[1]).map((e) => e[0]);
}

export function statusText(s: Summary): string {
    const t = s.totals;
    if (s.kind === 'heap') {
        const v = s.sample_type.unit === 'bytes' ? bytes(t.value) : String(t.value);
        return 'kestrel: heap ' + s.sample_type.type + ' ' + v + ' · about ' + Math.round(events(s)) + ' sampled allocations';
    }
    const parts = ['kestrel: ' + t.samples + ' samples'];
    if (s.kind === 'cpu' && t.rate_hz > 0) parts.push(t.rate_hz.toFixed(0) + ' Hz');
    if (s.kind === 'cpu' && s.states) parts.push('running ' + percent(s.states.running.share));
    return parts.join(' · ');
}

export function tooSmall(s: Summary): string | null {
    const n = events(s);
    if (n >= MIN_SAMPLES) return null;
    if (s.kind === 'heap')
        return 'the heap profile has about ' + Math.round(n) + ' sampled allocations, too few to trust (at least ' + MIN_SAMPLES +
            '): profile a run that allocates more';
    return 'the profile has ' + n + ' samples, too few to trust (at least ' + MIN_SAMPLES +
        '): make the program run longer or raise the rate';
}
