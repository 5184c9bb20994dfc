/* kestrel viewer: substring search over frame names (case-insensitive) and the share
 * of the selection whose stacks pass through a match. Pure functions. */
'use strict';
const KSearch = (() => {
    /* 1 for every frame whose name contains the query; null for an empty query. */
    function matchFrames(frames, query)
    {
        const q = String(query || '').toLowerCase();
        if (!q) return null;
        const m = new Uint8Array(frames.length);
        frames.forEach((f, i) => { if (f.name.toLowerCase().includes(q)) m[i] = 1; });
        return m;
    }

    /* Weight of the stacks with at least one matching frame, and its share. */
    function matchShare(stacks, w, total, matched)
    {
        let hitW = 0;
        for (let s = 0; s < stacks.length; s++) {
            if (!(w[s] > 0)) continue;
            for (const f of stacks[s])
                if (matched[f]) {
                    hitW += w[s];
                    break;
                }
        }
        return {weight: hitW, share: total > 0 ? hitW / total : 0};
    }

    return {matchFrames, matchShare};
})();
if (typeof module === 'object') module.exports = KSearch;
