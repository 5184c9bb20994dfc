/* kestrel viewer: how numbers are written (shares with their standard errors, bytes,
 * durations, counts). Pure functions; loaded as a classic script in the page and as a
 * CommonJS module by the node tests. */
'use strict';
const KFormat = (() => {
    /* Standard error of a share p estimated from n independent samples. */
    function stdErr(p, n)
    {
        if (!(n > 0)) return NaN;
        const q = Math.min(Math.max(p, 0), 1);
        return Math.sqrt((q * (1 - q)) / n);
    }

    /* "12.3%"; below 0.1% keeps two decimals so a small share does not read as zero. */
    function percent(share)
    {
        if (!Number.isFinite(share)) return '—';
        const v = share * 100, one = v.toFixed(1);
        return (v !== 0 && (one === '0.0' || one === '-0.0') ? v.toFixed(2) : one) + '%';
    }

    /* "12.3% ±0.4"; the SE is left out when it is not defined (no sample count). */
    function shareWithErr(share, se)
    {
        if (!Number.isFinite(se)) return percent(share);
        const e = se * 100, one = e.toFixed(1);
        return percent(share) + ' ±' + (e !== 0 && one === '0.0' ? e.toFixed(2) : one);
    }

    function count(n)
    {
        const s = String(Math.round(n));
        return s.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    }

    function scaled(v, steps)
    {
        let i = 0;
        while (i + 1 < steps.length && Math.abs(v) >= steps[i + 1][0]) i++;
        const [div, name] = steps[i];
        const x = v / div;
        const digits = i === 0 || Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2;
        return x.toFixed(digits) + ' ' + name;
    }

    const BYTES = [[1, 'B'], [1024, 'KiB'], [1024 * 1024, 'MiB'], [1024 ** 3, 'GiB'], [1024 ** 4, 'TiB']];
    const NANOS = [[1, 'ns'], [1e3, 'µs'], [1e6, 'ms'], [1e9, 's']];

    /* A value of a sample type in its unit: bytes, nanoseconds or a plain count. */
    function value(v, unit)
    {
        if (unit === 'bytes') return scaled(v, BYTES);
        if (unit === 'nanoseconds') return scaled(v, NANOS);
        return count(v);
    }

    /* The per-line heat written after a source line: "NN.N% · M samples". */
    function heat(share, n, unitValue)
    {
        const what = unitValue !== undefined ? unitValue : count(n) + (n === 1 ? ' sample' : ' samples');
        return percent(share) + ' · ' + what;
    }

    return {stdErr, percent, shareWithErr, count, value, heat};
})();
if (typeof module === 'object') module.exports = KFormat;
