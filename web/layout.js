/* kestrel viewer: where every box of the flame graph goes.
 *
 * Two layouts over one shape: nodes in typed arrays (frame, parent, depth, x, total,
 * self, count) and, per depth, the node ids in increasing x, so the renderer and the
 * hit test find what is on screen by binary search instead of walking every node.
 *   leftHeavy: the stacks merged into one call tree, siblings widest first.
 *   timeOrder: the samples in time order per thread; consecutive samples that share a
 *              prefix share its boxes. Depth 0 is the thread.
 * x and widths are in units of the selected sample type. Depth 0 has frame -1. */
'use strict';
const KLayout = (() => {
    /* A typed array that grows by doubling. */
    function grow(a, need)
    {
        if (need <= a.length) return a;
        const b = new a.constructor(Math.max(need, a.length * 2));
        b.set(a);
        return b;
    }

    function Nodes(cap)
    {
        this.n = 0;
        this.frame = new Int32Array(cap);
        this.parent = new Int32Array(cap);
        this.depth = new Int32Array(cap);
        this.x = new Float64Array(cap);
        this.total = new Float64Array(cap);
        this.self = new Float64Array(cap);
        this.count = new Float64Array(cap);
    }
    Nodes.prototype.add = function (frame, parent, depth, x) {
        const i = this.n++;
        if (i >= this.frame.length)
            for (const k of ['frame', 'parent', 'depth', 'x', 'total', 'self', 'count'])
                this[k] = grow(this[k], i + 1);
        this.frame[i] = frame;
        this.parent[i] = parent;
        this.depth[i] = depth;
        this.x[i] = x;
        return i;
    };

    function finish(kind, nodes, rows)
    {
        let maxDepth = 0;
        for (let d = 0; d < rows.length; d++) if (rows[d].length) maxDepth = d;
        return {
            kind, n: nodes.n, frame: nodes.frame, parent: nodes.parent, depth: nodes.depth,
            x: nodes.x, total: nodes.total, self: nodes.self, count: nodes.count,
            rows: rows.map((r) => Int32Array.from(r)), maxDepth, width: nodes.total[0] || 0,
        };
    }

    /* stacks: root-first Int32Arrays of frame ids; w/cnt: weight and samples per stack;
     * rank: a total order of frames, to break ties between equally wide siblings. */
    function leftHeavy(stacks, w, cnt, nFrames, rank)
    {
        let cap = 1;
        for (let s = 0; s < stacks.length; s++) if (w[s] > 0) cap += stacks[s].length;
        const nodes = new Nodes(cap);
        nodes.add(-1, -1, 0, 0);
        const child = new Map(); /* parent * nFrames + frame -> node */
        for (let s = 0; s < stacks.length; s++) {
            const ws = w[s];
            if (!(ws > 0)) continue;
            const st = stacks[s];
            let cur = 0;
            nodes.total[0] += ws;
            nodes.count[0] += cnt[s];
            for (let d = 0; d < st.length; d++) {
                const key = cur * nFrames + st[d];
                let c = child.get(key);
                if (c === undefined) {
                    c = nodes.add(st[d], cur, d + 1, 0);
                    child.set(key, c);
                }
                nodes.total[c] += ws;
                nodes.count[c] += cnt[s];
                cur = c;
            }
            nodes.self[cur] += ws;
        }
        const n = nodes.n;
        /* Children of each node, contiguous (parents come before their children). */
        const start = new Int32Array(n + 1);
        for (let i = 1; i < n; i++) start[nodes.parent[i] + 1]++;
        for (let i = 0; i < n; i++) start[i + 1] += start[i];
        const kids = new Int32Array(Math.max(n - 1, 0)), fill = start.slice(0, n);
        for (let i = 1; i < n; i++) kids[fill[nodes.parent[i]]++] = i;
        const tot = nodes.total, fr = nodes.frame;
        const widest = (a, b) => tot[b] - tot[a] || rank[fr[a]] - rank[fr[b]];
        for (let p = 0; p < n; p++) {
            if (start[p + 1] - start[p] < 2) continue;
            const sorted = Array.from(kids.subarray(start[p], start[p + 1])).sort(widest);
            kids.set(sorted, start[p]);
        }
        /* Preorder: x of each child after its older siblings; rows come out in x order. */
        const rows = [];
        const todo = [0];
        while (todo.length) {
            const v = todo.pop();
            const d = nodes.depth[v];
            (rows[d] || (rows[d] = [])).push(v);
            let x = nodes.x[v];
            for (let k = start[v]; k < start[v + 1]; k++) {
                nodes.x[kids[k]] = x;
                x += tot[kids[k]];
            }
            for (let k = start[v + 1] - 1; k >= start[v]; k--) todo.push(kids[k]);
        }
        return finish('merged', nodes, rows);
    }

    /* order: sample ids in (thread, time) order; stackOf/threadOf/weight: per sample. */
    function timeOrder(stacks, order, stackOf, threadOf, weight, cntOf)
    {
        const nodes = new Nodes(1024);
        const rows = [];
        const openNode = [], openFrame = [], rootThread = [];
        let openLen = 0, openThread = -1, x = 0;
        const push = (d, v) => (rows[d] || (rows[d] = [])).push(v);
        nodes.add(-1, -1, 0, 0); /* node 0: the whole selection, never drawn */
        for (let k = 0; k < order.length; k++) {
            const i = order[k], wt = weight[i], c = cntOf ? cntOf[i] : 1;
            if (!(wt > 0)) continue;
            const st = stacks[stackOf[i]];
            nodes.total[0] += wt;
            nodes.count[0] += c;
            if (threadOf[i] !== openThread) {
                openThread = threadOf[i];
                const r = nodes.add(-1, 0, 0, x);
                rootThread.push([r, openThread]);
                push(0, r);
                openNode[0] = r;
                openLen = 1;
            }
            let diverged = false;
            for (let d = 0; d <= st.length; d++) {
                if (d > 0) {
                    const f = st[d - 1];
                    if (diverged || d >= openLen || openFrame[d] !== f) {
                        diverged = true;
                        const v = nodes.add(f, openNode[d - 1], d, x);
                        push(d, v);
                        openNode[d] = v;
                        openFrame[d] = f;
                    }
                }
                nodes.total[openNode[d]] += wt;
                nodes.count[openNode[d]] += c;
            }
            nodes.self[openNode[st.length]] += wt;
            openLen = st.length + 1;
            x += wt;
        }
        const out = finish('time', nodes, rows);
        out.thread = new Int32Array(out.n).fill(-1);
        for (const [r, t] of rootThread) out.thread[r] = t;
        return out;
    }

    /* The node under x (in weight units) at a depth, or -1. */
    function hit(lay, depth, x)
    {
        const row = lay.rows[depth];
        if (!row) return -1;
        let lo = 0, hi = row.length - 1, found = -1;
        while (lo <= hi) {
            const mid = (lo + hi) >> 1;
            if (lay.x[row[mid]] <= x) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        if (found < 0) return -1;
        const v = row[found];
        return x < lay.x[v] + lay.total[v] ? v : -1;
    }

    /* Index in a row of the first node that ends after x. */
    function firstVisible(lay, row, x)
    {
        let lo = 0, hi = row.length;
        while (lo < hi) {
            const mid = (lo + hi) >> 1;
            const v = row[mid];
            if (lay.x[v] + lay.total[v] <= x) lo = mid + 1;
            else hi = mid;
        }
        return lo;
    }

    /* The node and its ancestors, root first (for the breadcrumb). */
    function path(lay, v)
    {
        const out = [];
        for (; v >= 0; v = lay.parent[v]) out.push(v);
        return out.reverse();
    }

    return {leftHeavy, timeOrder, hit, firstVisible, path};
})();
if (typeof module === 'object') module.exports = KLayout;
