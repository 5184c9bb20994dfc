/* kestrel viewer: frame colours, a function of the profile alone.
 *
 * Frames are ranked by (file, name, original index) and each rank picks a colour from a
 * fixed ramp. The comparator is a total order over the pair: file and name are compared
 * one after the other by UTF-16 code units (never localeCompare, which depends on the
 * machine, and never one spliced "file name" string, under which ("/w/a b.osp", "z")
 * and ("/w/a", "b.osp z") would collide). Two frames compare equal only when they are
 * the same frame (same index), so ranks never depend on how a sort treats ties.
 *
 * Every frame of one function (same file and name) takes the colour of the first rank
 * of that function, so the same profile with its frames listed in another order gets
 * the same colours, frame for frame. */
'use strict';
const KColors = (() => {
    /* Warm ramp, ordered so that neighbouring ranks get visibly different shades. */
    const RAMP = [
        '#e8743b', '#f2b134', '#d9503f', '#f5cf6a', '#e0892f', '#c8553d', '#f0a04b',
        '#e4c04a', '#d96c4a', '#f7d27e', '#cf6a32', '#eaa23c', '#de5a44', '#f3be5c',
        '#e37f3f', '#cc4e3a', '#f0b95a', '#d8843a', '#f4c76b', '#e2683d',
    ];

    function cmpStr(a, b)
    {
        return a < b ? -1 : a > b ? 1 : 0;
    }

    /* a, b: {file, name, index}. Negative, zero (same frame only) or positive. */
    function compareFrames(a, b)
    {
        return cmpStr(a.file, b.file) || cmpStr(a.name, b.name) || a.index - b.index;
    }

    /* frames: [{name, file}] in the profile's order. Returns the rank of each frame. */
    function rankFrames(frames)
    {
        const keyed = frames.map((f, i) => ({file: f.file || '', name: f.name || '', index: i}));
        keyed.sort(compareFrames);
        const rank = new Int32Array(frames.length);
        keyed.forEach((k, r) => { rank[k.index] = r; });
        return rank;
    }

    /* The ramp index of every frame: the first rank of its function (file, name). */
    function frameColorIndex(frames)
    {
        const keyed = frames.map((f, i) => ({file: f.file || '', name: f.name || '', index: i}));
        keyed.sort(compareFrames);
        const out = new Int32Array(frames.length);
        let groupRank = 0;
        for (let r = 0; r < keyed.length; r++) {
            const k = keyed[r];
            if (r > 0 && (k.file !== keyed[r - 1].file || k.name !== keyed[r - 1].name))
                groupRank = r;
            out[k.index] = groupRank % RAMP.length;
        }
        return out;
    }

    function frameColors(frames)
    {
        return Array.from(frameColorIndex(frames), (i) => RAMP[i]);
    }

    /* A diff page's colour of a function from its comparison (or null: not compared):
     * red when its total share grew and the change is real, blue when it shrank and is
     * real, grey when it is within noise. Noise is the comparison's own verdict (the
     * same test as `kestrel diff`'s table), never a threshold on the colour. */
    const GREW = '#d62728', SHRANK = '#1f77b4', NOISE = '#b0b0b0';
    function diffColor(d)
    {
        if (!d || !d.total.real) return NOISE;
        return d.total.now > d.total.base ? GREW : SHRANK;
    }

    return {RAMP, compareFrames, rankFrames, frameColorIndex, frameColors, diffColor, GREW, SHRANK, NOISE};
})();
if (typeof module === 'object') module.exports = KColors;
