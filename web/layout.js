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
    /* Node arrays with a known capacity (both layouts count their nodes first, so
     * nothing grows or is copied while building). */
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
        this.frame[i] = frame;
        this.parent[i] = parent;
        this.depth[i] = depth;
        this.x[i] = x;
        return i;
    };

    /* Per depth, the node ids in the order given (which is increasing x in each row). */
    function rowsOf(nodes, order)
    {
        let maxDepth = 0;
        for (let i = 0; i < nodes.n; i++) if (nodes.depth[i] > maxDepth) maxDepth = nodes.depth[i];
        const size = new Int32Array(maxDepth + 1);
        for (const v of order) size[nodes.depth[v]]++;
        const rows = Array.from(size, (n) => new Int32Array(n));
        size.fill(0);
        for (const v of order) {
            const d = nodes.depth[v];
            rows[d][size[d]++] = v;
        }
        return rows;
    }

    function finish(kind, nodes, rows)
    {
        let maxDepth = 0;
        for (let d = 0; d < rows.length; d++) if (rows[d].length) maxDepth = d;
        return {
            kind, n: nodes.n, frame: nodes.frame, parent: nodes.parent, depth: nodes.depth,
            x: nodes.x, total: nodes.total, self: nodes.self, count: nodes.count,
            rows, maxDepth, width: nodes.total[0] || 0,
        };
    }

    /* stacks: root-first Int32Arrays of frame ids; w/cnt: weight and samples per stack;
     * rank: a total order of frames, to break ties between equally wide siblings. */
    function leftHeavy(stacks, w, cnt, rank)
    {
        let cap = 1;
        for (let s = 0; s < stacks.length; s++) if (w[s] > 0) cap += stacks[s].length;
        const nodes = new Nodes(cap);
        nodes.add(-1, -1, 0, 0);
        /* The stacks in lexicographic order: each one shares with the previous one
         * exactly the prefix of the tree it reuses, so the tree is built by walking
         * arrays in order, with no lookup of children at all. */
        const live = [];
        let maxLen = 0;
        for (let s = 0; s < stacks.length; s++) {
            if (!(w[s] > 0)) continue;
            live.push(s);
            if (stacks[s].length > maxLen) maxLen = stacks[s].length;
        }
        live.sort((a, b) => {
            const x = stacks[a], y = stacks[b], n = Math.min(x.length, y.length);
            for (let i = 0; i < n; i++) if (x[i] !== y[i]) return x[i] - y[i];
            return x.length - y.length;
        });
        const path = new Int32Array(maxLen + 1); /* path[d]: the node at depth d */
        let prev = new Int32Array(0);
        for (const s of live) {
            const st = stacks[s], ws = w[s], cs = cnt[s];
            let c = 0;
            while (c < st.length && c < prev.length && st[c] === prev[c]) c++;
            for (let d = c; d < st.length; d++) path[d + 1] = nodes.add(st[d], path[d], d + 1, 0);
            for (let d = 0; d <= st.length; d++) {
                nodes.total[path[d]] += ws;
                nodes.count[path[d]] += cs;
            }
            nodes.self[path[st.length]] += ws;
            prev = st;
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
            kids.subarray(start[p], start[p + 1]).sort(widest);
        }
        /* Preorder: x of each child after its older siblings; rows come out in x order. */
        const order = new Int32Array(n), todo = new Int32Array(n);
        let top = 0, k = 0;
        todo[top++] = 0;
        while (top) {
            const v = todo[--top];
            order[k++] = v;
            let x = nodes.x[v];
            for (let j = start[v]; j < start[v + 1]; j++) {
                nodes.x[kids[j]] = x;
                x += tot[kids[j]];
            }
            for (let j = start[v + 1] - 1; j >= start[v]; j--) todo[top++] = kids[j];
        }
        return finish('merged', nodes, rowsOf(nodes, order));
    }

    /* order: sample ids in (thread, time) order; stackOf/threadOf/weight: per sample. */
    function timeOrder(stacks, order, stackOf, threadOf, weight, cntOf)
    {
        /* First pass: how many boxes (a new thread opens all of its levels, otherwise
         * only the levels past the prefix shared with the previous sample). */
        let cap = 1, prev = null, prevThread = -1, maxLen = 0;
        for (let k = 0; k < order.length; k++) {
            const i = order[k];
            if (!(weight[i] > 0)) continue;
            const st = stacks[stackOf[i]];
            if (st.length > maxLen) maxLen = st.length;
            if (threadOf[i] !== prevThread) {
                cap += st.length + 1;
            } else {
                let c = 0;
                while (c < st.length && c < prev.length && st[c] === prev[c]) c++;
                cap += st.length - c;
            }
            prev = st;
            prevThread = threadOf[i];
        }
        const nodes = new Nodes(cap);
        const openNode = new Int32Array(maxLen + 1), openFrame = new Int32Array(maxLen + 1), rootThread = [];
        let openLen = 0, openThread = -1, x = 0;
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
                openNode[0] = r;
                openLen = 1;
            }
            let diverged = false;
            for (let d = 0; d <= st.length; d++) {
                if (d > 0) {
                    const f = st[d - 1];
                    if (diverged || d >= openLen || openFrame[d] !== f) {
                        diverged = true;
                        openNode[d] = nodes.add(f, openNode[d - 1], d, x);
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
        /* Boxes are made left to right, so node order is x order in every row. */
        const out = finish('time', nodes, rowsOf(nodes, Int32Array.from({length: nodes.n - 1}, (_, v) => v + 1)));
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
