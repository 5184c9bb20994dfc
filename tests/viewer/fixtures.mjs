// Hand-made viewer data (docs/viewer-data.md) for the unit tests and for the browser
// tests of what a recorded profile cannot contain on demand (a markup-named frame, a
// missing source file, a heap profile with every sample type).
export const XSS_NAME = '<img src=x onerror=alert(1)>';

export function cpuData()
{
    const frames = [
        ['main', '/w/demo.c', 40],      // 0
        ['work', '/w/demo.c', 30],      // 1
        ['hot_loop', '/w/demo.c', 12],  // 2
        ['cold_path', '/w/demo.c', 20], // 3
        [XSS_NAME, '/w/evil.c', 3],     // 4
        ['read', '', 0],                // 5
        ['worker', '/w/gone.c', 7],     // 6
    ];
    const stacks = [
        [0, 1, 2],    // 0: main work hot_loop
        [0, 1, 3],    // 1: main work cold_path
        [0, 4],       // 2: main <img..>
        [6, 5],       // 3: worker read (waiting)
        [6, 2],       // 4: worker hot_loop
    ];
    // Per sample: [time ns, thread, stack, state]
    const rows = [];
    let t = 0;
    const add = (n, thread, stack, state) => {
        for (let i = 0; i < n; i++) rows.push([(t += 1000000), thread, stack, state]);
    };
    add(60, 0, 0, 0);
    add(20, 0, 1, 0);
    add(10, 0, 2, 0);
    add(30, 1, 3, 1);
    add(30, 1, 4, 0);
    return {
        version: 1, kind: 'cpu', title: 'demo <b>bold</b>',
        meta: {rate_hz: 997, dropped: 0},
        sample_types: [{name: 'samples', unit: 'count'}, {name: 'cpu', unit: 'nanoseconds'}],
        default_type: 0,
        threads: [{label: 'main', fiber: 0, tid: 100, name: 'demo'}, {label: 'thread', fiber: 1, tid: 101, name: 'worker'}],
        frames, stacks,
        samples: {
            time: rows.map((r) => r[0]), thread: rows.map((r) => r[1]), stack: rows.map((r) => r[2]),
            state: rows.map((r) => r[3]),
            values: [rows.map(() => 1), rows.map((r) => (r[3] ? 0 : 1000000))],
        },
        sources: [
            {file: '/w/demo.c', text: Array.from({length: 45}, (_, i) => '/* line ' + (i + 1) + ' */ int x' + i + ';').join('\n') + '\n'},
            {file: '/w/gone.c', missing: 'cannot open /w/gone.c: No such file or directory'},
        ],
    };
}

export function heapData()
{
    const frames = [['main', '/w/h.c', 5], ['make_cache', '/w/h.c', 10], ['make_temp', '/w/h.c', 20], ['malloc', '', 0]];
    const stacks = [[0, 1, 3], [0, 2, 3]];
    // alloc_objects, alloc_space, inuse_objects, inuse_space
    const vals = [[10, 1000], [8 << 20, 2 << 20], [10, 0], [8 << 20, 0]];
    return {
        version: 1, kind: 'heap', title: 'heap demo', meta: {},
        sample_types: [{name: 'alloc_objects', unit: 'count'}, {name: 'alloc_space', unit: 'bytes'},
                       {name: 'inuse_objects', unit: 'count'}, {name: 'inuse_space', unit: 'bytes'}],
        default_type: 3,
        threads: [{label: 'main', fiber: 0, name: 'h'}],
        frames, stacks,
        samples: {stack: [0, 1], thread: [0, 0], values: vals},
        sources: [],
    };
}

// n distinct stacks over a few hundred functions, depth 8..40: the large-profile case.
export function bigData(nStacks, seed = 1)
{
    let s = seed >>> 0; // mulberry32: exact in 32-bit integer arithmetic
    const rnd = () => {
        s = (s + 0x6d2b79f5) >>> 0;
        let t = Math.imul(s ^ (s >>> 15), 1 | s);
        t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const nf = 2000;
    const frames = Array.from({length: nf}, (_, i) => ['fn_' + i, '/w/src/file' + (i % 40) + '.c', 1 + (i % 300)]);
    const stacks = [], seen = new Set();
    while (stacks.length < nStacks) {
        const depth = 8 + Math.floor(rnd() * 33);
        const st = [0];
        for (let d = 1; d < depth; d++) st.push(Math.floor(Math.pow(rnd(), 2) * nf * Math.min(1, d / 6)));
        const key = st.join(',');
        if (seen.has(key)) continue;
        seen.add(key);
        stacks.push(st);
    }
    const n = nStacks * 2;
    const stack = [], thread = [], time = [], state = [], v0 = [], v1 = [];
    for (let i = 0; i < n; i++) {
        stack.push(i < nStacks ? i : Math.floor(rnd() * nStacks));
        thread.push(i % 4);
        time.push(i * 1000);
        state.push(rnd() < 0.2 ? 1 : 0);
        v0.push(1);
        v1.push(1000000);
    }
    return {
        version: 1, kind: 'cpu', title: 'synthetic ' + nStacks + ' stacks', meta: {},
        sample_types: [{name: 'samples', unit: 'count'}, {name: 'cpu', unit: 'nanoseconds'}], default_type: 0,
        threads: [0, 1, 2, 3].map((i) => ({label: i ? 'thread' : 'main', fiber: i})),
        frames, stacks, samples: {stack, thread, time, state, values: [v0, v1]}, sources: [],
    };
}
