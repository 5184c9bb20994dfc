/* kestrel viewer: self and total per function (recursion counted once), their standard
 * errors, and the heat of source lines, from the stack weights of a selection.
 * A function is (file, name); a frame adds the line. Pure functions. */
'use strict';
const KStats = (() => {
    const F = typeof require === 'function' ? require('./format.js') : KFormat;

    /* Functions of the profile and the function of every frame. */
    function functions(frames)
    {
        const byKey = new Map(), list = [], ofFrame = new Int32Array(frames.length);
        frames.forEach((f, i) => {
            let perFile = byKey.get(f.file);
            if (!perFile) byKey.set(f.file, (perFile = new Map()));
            let id = perFile.get(f.name);
            if (id === undefined) {
                id = list.length;
                perFile.set(f.name, id);
                list.push({name: f.name, file: f.file, line: f.line, frames: []});
            }
            list[id].frames.push(i);
            if (f.line > 0 && (list[id].line === 0 || f.line < list[id].line)) list[id].line = f.line;
            ofFrame[i] = id;
        });
        return {list, ofFrame};
    }

    /* Rows {fn, name, file, line, self, total, selfN, totalN, selfShare, totalShare,
     * selfSE, totalSE}; standard errors only when weights are samples of one run
     * (CPU), n = the selected samples. */
    function hotFunctions(p, fns, sw, withErrors)
    {
        const nfn = fns.list.length;
        const self = new Float64Array(nfn), total = new Float64Array(nfn);
        const selfN = new Float64Array(nfn), totalN = new Float64Array(nfn);
        const seen = new Int32Array(nfn).fill(-1);
        p.stacks.forEach((st, s) => {
            if (!(sw.w[s] > 0) || st.length === 0) return;
            const leaf = fns.ofFrame[st[st.length - 1]];
            self[leaf] += sw.w[s];
            selfN[leaf] += sw.cnt[s];
            for (const f of st) {
                const fn = fns.ofFrame[f];
                if (seen[fn] === s) continue; /* recursion: once per stack */
                seen[fn] = s;
                total[fn] += sw.w[s];
                totalN[fn] += sw.cnt[s];
            }
        });
        const rows = [];
        for (let i = 0; i < nfn; i++) {
            if (!(total[i] > 0)) continue;
            const selfShare = sw.total > 0 ? self[i] / sw.total : 0;
            const totalShare = sw.total > 0 ? total[i] / sw.total : 0;
            const fn = fns.list[i];
            rows.push({
                fn: i, name: fn.name, file: fn.file, line: fn.line, self: self[i], total: total[i],
                selfN: selfN[i], totalN: totalN[i], selfShare, totalShare,
                selfSE: withErrors ? F.stdErr(selfShare, sw.n) : NaN,
                totalSE: withErrors ? F.stdErr(totalShare, sw.n) : NaN,
            });
        }
        return rows;
    }

    /* A total order for the table: by the column, then by name, file, function id. */
    function sortRows(rows, key, descending)
    {
        const dir = descending ? -1 : 1;
        const str = (a, b) => (a < b ? -1 : a > b ? 1 : 0);
        return rows.slice().sort((a, b) => {
            const c = key === 'name' ? str(a.name, b.name) : a[key] - b[key];
            return dir * c || str(a.name, b.name) || str(a.file, b.file) || a.fn - b.fn;
        });
    }

    /* Heat of each line of one file: the weight and samples of the stacks that pass
     * through it (once per stack), as Map line -> {w, n, share}. */
    function lineHeat(p, sw, file)
    {
        const atFile = new Int32Array(p.frames.length).fill(0);
        p.frames.forEach((f, i) => { if (f.file === file && f.line > 0) atFile[i] = f.line; });
        const heat = new Map();
        p.stacks.forEach((st, s) => {
            if (!(sw.w[s] > 0)) return;
            const lines = new Set();
            for (const f of st) if (atFile[f]) lines.add(atFile[f]);
            for (const l of lines) {
                const h = heat.get(l) || {w: 0, n: 0, share: 0};
                h.w += sw.w[s];
                h.n += sw.cnt[s];
                heat.set(l, h);
            }
        });
        for (const h of heat.values()) h.share = sw.total > 0 ? h.w / sw.total : 0;
        return heat;
    }

    return {functions, hotFunctions, sortRows, lineHeat};
})();
if (typeof module === 'object') module.exports = KStats;
