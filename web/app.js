/* kestrel viewer: the page. Reads the profile embedded in #kestrel-data, wires the
 * controls, the flame graph, the hot-function table and the source view. Every string
 * from the profile reaches the document through textContent, never as markup. */
'use strict';
(() => {
    const $ = (id) => document.getElementById(id);
    const el = (tag, cls, text) => {
        const e = document.createElement(tag);
        if (cls) e.className = cls;
        if (text !== undefined) e.textContent = text;
        return e;
    };
    const HOT_ROWS = 300;

    const st = {
        p: null, fns: null, fnRank: null, fnColors: null, fstacks: null,
        sel: {type: 0, state: 'cpu', thread: -1, process: -1}, view: 'merged',
        sw: null, lay: null, rows: [], sort: {key: 'self', desc: true},
        matched: null, selectedFn: -1, focus: -1,
    };

    function unitOf() { return st.p.types[st.sel.type].unit; }
    function withErrors() { return st.p.kind === 'cpu'; }
    function loc(f) { return f.file ? (f.line > 0 ? f.file + ':' + f.line : f.file) : 'no source file'; }

    function label(v)
    {
        const lay = st.lay, f = lay.frame[v];
        if (f >= 0) return st.fns.list[f].name;
        if (lay.kind === 'time') {
            const t = st.p.threads[lay.thread[v]];
            return t ? threadName(t) : 'thread';
        }
        return 'all';
    }

    function processName(q)
    {
        return q.pid == null ? q.name : q.name + ' [' + q.pid + ']';
    }

    function threadName(t)
    {
        let s = t.label + '-' + t.fiber;
        /* Of a process tree: which process each thread is of. */
        if (st.p.processes.length > 1 && t.process >= 0) s = processName(st.p.processes[t.process]) + ' ' + s;
        if (t.name && t.name !== t.label) s += ' (' + t.name + ')';
        if (t.tid != null) s += ' tid ' + t.tid;
        return s;
    }

    /* --- the numbers of one box ---------------------------------------------------- */
    function boxFacts(v)
    {
        const lay = st.lay, total = st.sw.total, n = st.sw.n;
        const share = (x) => (total > 0 ? x / total : 0);
        const se = (p) => (withErrors() ? KFormat.stdErr(p, n) : NaN);
        const ps = share(lay.self[v]), pt = share(lay.total[v]);
        return [
            ['self', KFormat.shareWithErr(ps, se(ps)), KFormat.value(lay.self[v], unitOf())],
            ['total', KFormat.shareWithErr(pt, se(pt)), KFormat.value(lay.total[v], unitOf())],
            ['samples', KFormat.count(lay.count[v]), ''],
        ];
    }

    function factsTable(rows)
    {
        const t = el('table');
        for (const [k, val, extra] of rows) {
            const tr = el('tr');
            tr.append(el('td', null, k), el('td', null, val), el('td', null, extra));
            t.append(tr);
        }
        return t;
    }

    /* A function's comparison in a diff page, or null. */
    function diffOf(fn)
    {
        return st.p.diff ? st.p.diff.byKey.get((fn.file || '') + '\u0000' + fn.name) || null : null;
    }

    /* The tooltip's rows of a diff page: both shares with their errors, Δ, z, verdict. */
    function diffFacts(fn)
    {
        const d = diffOf(fn);
        if (!d) return [['change', 'not compared', '']];
        const abs = st.p.diff.absolute;
        const amount = (v, se) => (abs ? KFormat.count(Math.round(v)) + ' ±' + KFormat.count(Math.round(se))
                                       : KFormat.shareWithErr(v, se));
        const rows = [];
        for (const [k, s] of [['self', d.self], ['total', d.total]]) {
            rows.push([k + ' base', amount(s.base, s.baseSe), '']);
            rows.push([k + ' new', amount(s.now, s.nowSe), '']);
            const dv = s.now - s.base, sign = dv > 0 ? '+' : '';
            const delta = sign + (abs ? KFormat.count(Math.round(dv)) : (dv * 100).toFixed(1) + ' pts');
            rows.push([k + ' Δ', delta, 'z ' + s.z.toFixed(1) + ' · ' + (s.real ? 'real' : 'noise')]);
        }
        if (d.presence !== 'both') rows.push(['', d.presence === 'new' ? 'new in NEW' : 'gone from BASE', '']);
        return rows;
    }

    /* --- tooltip ---------------------------------------------------------------------- */
    function onHover(v, ev)
    {
        const tip = $('tooltip');
        if (v < 0 || !st.lay) {
            tip.hidden = true;
            return;
        }
        tip.replaceChildren();
        const f = st.lay.frame[v];
        tip.append(el('div', 'name', label(v)));
        if (f >= 0) tip.append(el('div', 'loc', loc(st.fns.list[f])));
        tip.append(factsTable(boxFacts(v)));
        if (st.p.diff && f >= 0) tip.append(factsTable(diffFacts(st.fns.list[f])));
        tip.hidden = false;
        const box = $('graph').getBoundingClientRect();
        let x = ev.clientX - box.left + 14, y = ev.clientY - box.top + 14;
        if (x + tip.offsetWidth > box.width) x = Math.max(0, ev.clientX - box.left - tip.offsetWidth - 8);
        if (y + tip.offsetHeight > box.height) y = Math.max(0, ev.clientY - box.top - tip.offsetHeight - 8);
        tip.style.left = x + 'px';
        tip.style.top = y + 'px';
    }

    /* --- zoom: breadcrumb and details ---------------------------------------------- */
    function onZoom(v)
    {
        const nav = $('crumbs');
        nav.replaceChildren();
        const path = v >= 0 ? KLayout.path(st.lay, v) : [];
        if (st.lay.kind === 'time' && path.length && path[0] === 0) path.shift();
        const all = el('button', null, 'all');
        all.addEventListener('click', () => view.reset());
        nav.append(all);
        for (const u of path) {
            if (st.lay.kind === 'merged' && u === 0) continue;
            nav.append(el('span', 'sep', ' › '));
            const b = el('button', null, label(u));
            b.addEventListener('click', () => view.zoomTo(u));
            nav.append(b);
        }
        showDetails(v);
        /* In an editor (editors/vscode), a frame clicked opens its source there. */
        const f = v >= 0 ? st.lay.frame[v] : -1;
        if (window.kestrelHost && f >= 0 && st.fns.list[f].file)
            window.kestrelHost.openSource(st.fns.list[f].file, st.fns.list[f].line);
    }

    function showDetails(v)
    {
        const d = $('details');
        d.replaceChildren();
        st.focus = v;
        const f = v >= 0 ? st.lay.frame[v] : -1;
        if (f < 0) {
            d.append(el('p', 'hint', 'Click a frame to zoom; Escape or the path above goes back. ' +
                                         'Drag or scroll to pan, Ctrl + wheel zooms.'));
            return;
        }
        const fr = st.fns.list[f];
        d.append(el('div', 'name', fr.name), el('div', 'loc', loc(fr)), factsTable(boxFacts(v)));
        const b = el('button', null, 'Show source');
        b.id = 'show-source';
        b.addEventListener('click', () => openSource(fr.file, fr.line));
        d.append(b);
    }

    /* --- search ------------------------------------------------------------------------ */
    function applySearch()
    {
        const q = $('search').value;
        st.matched = KSearch.matchFrames(st.p.frames, q);
        const out = $('match');
        if (!st.matched) {
            out.textContent = '';
        } else {
            const m = KSearch.matchShare(st.p.stacks, st.sw.w, st.sw.total, st.matched);
            out.textContent = m.weight > 0 ? KFormat.percent(m.share) + ' of the selection matches “' + q + '”'
                                            : 'no frame matches “' + q + '”';
        }
        view.dim = st.matched ? byFunction(st.matched) : st.selectedFn >= 0 ? fnMask(st.selectedFn) : null;
        view.redraw();
    }

    /* The graph's boxes are functions: a per-frame mask becomes a per-function one. */
    function byFunction(frameMask)
    {
        const m = new Uint8Array(st.fns.list.length);
        frameMask.forEach((on, f) => { if (on) m[st.fns.ofFrame[f]] = 1; });
        return m;
    }

    function fnMask(fn)
    {
        const m = new Uint8Array(st.fns.list.length);
        m[fn] = 1;
        return m;
    }

    /* --- hot-function table ------------------------------------------------------------ */
    function renderHot()
    {
        const rows = KStats.sortRows(st.rows, st.sort.key, st.sort.desc);
        const body = $('hot').tBodies[0];
        body.replaceChildren();
        for (const r of rows.slice(0, HOT_ROWS)) {
            const tr = el('tr');
            tr.dataset.fn = r.fn;
            if (r.fn === st.selectedFn) tr.className = 'selected';
            const name = el('td', 'fn', r.name);
            name.title = r.name + '\n' + (r.file ? r.file : 'no source file');
            tr.append(name, el('td', 'num', KFormat.shareWithErr(r.selfShare, r.selfSE)),
                      el('td', 'num', KFormat.shareWithErr(r.totalShare, r.totalSE)));
            tr.addEventListener('click', () => selectFunction(r.fn));
            body.append(tr);
        }
        $('hot-more').textContent = rows.length > HOT_ROWS ? (rows.length - HOT_ROWS) + ' more functions not listed' : '';
        for (const b of $('hot').tHead.querySelectorAll('button'))
            if (b.dataset.key === st.sort.key) b.setAttribute('aria-sort', st.sort.desc ? 'descending' : 'ascending');
            else b.removeAttribute('aria-sort');
    }

    /* Selecting a function outlines its boxes, dims the rest and brings the widest into view. */
    function selectFunction(fn)
    {
        st.selectedFn = st.selectedFn === fn ? -1 : fn;
        view.mark = st.selectedFn >= 0 ? fnMask(st.selectedFn) : null;
        if (!st.matched) view.dim = view.mark;
        if (st.selectedFn >= 0) {
            const mark = view.mark, lay = st.lay;
            let best = -1;
            for (let v = 0; v < lay.n; v++)
                if (lay.frame[v] >= 0 && mark[lay.frame[v]] && (best < 0 || lay.total[v] > lay.total[best])) best = v;
            if (best >= 0) {
                const y = lay.depth[best] * KRender.ROW;
                const h = view.size().h;
                if (y < view.scrollY || y > view.scrollY + h - 2 * KRender.ROW) view.scrollY = y - h / 3;
                showDetails(best);
            }
        }
        renderHot();
        view.redraw();
    }

    /* --- source view ------------------------------------------------------------------- */
    function openSource(file, line)
    {
        const src = st.p.sources.get(file);
        $('source-file').textContent = file || 'no source file';
        const miss = $('source-missing'), code = $('code'), list = $('hotlines'), ruler = $('ruler');
        code.replaceChildren();
        list.replaceChildren();
        ruler.replaceChildren();
        miss.hidden = true;
        $('source').hidden = false;
        if (!file || !src || src.missing !== undefined) {
            miss.hidden = false;
            miss.textContent = !file ? 'This frame has no source file: only its address is known.'
                : !src ? 'The source of ' + file + ' is not in this page: it is not among the files of the hottest lines.'
                       : 'The source of ' + file + ' is not in this page: ' + src.missing + '.';
            return;
        }
        const heat = KStats.lineHeat(st.p, st.sw, file);
        const lines = src.text.split('\n');
        if (lines.length && lines[lines.length - 1] === '') lines.pop();
        const heatText = (h) => KFormat.heat(h.share, h.n, st.p.kind === 'heap' ? KFormat.value(h.w, unitOf()) : undefined);
        const maxShare = Math.max(1e-12, ...Array.from(heat.values(), (h) => h.share));
        lines.forEach((t, i) => {
            const row = el('div', 'ln');
            row.id = 'L' + (i + 1);
            row.append(el('span', 'no', String(i + 1)), el('span', 'tx', t));
            const h = heat.get(i + 1);
            if (h) {
                row.append(el('span', 'heat', heatText(h)));
                row.style.background = 'rgba(232,116,59,' + (0.08 + 0.4 * h.share / maxShare).toFixed(3) + ')';
            }
            if (i + 1 === line) row.classList.add('target');
            code.append(row);
        });
        const hot = Array.from(heat.entries()).sort((a, b) => b[1].w - a[1].w || a[0] - b[0]);
        for (const [ln, h] of hot.slice(0, 12)) {
            const li = el('li', null, 'line ' + ln + ': ' + heatText(h));
            li.addEventListener('click', () => goLine(ln));
            list.append(li);
            const mark = el('i');
            mark.style.top = (100 * (ln - 1) / Math.max(lines.length, 1)).toFixed(2) + '%';
            mark.style.opacity = (0.35 + 0.65 * h.share / maxShare).toFixed(2);
            ruler.append(mark);
        }
        for (const [ln] of hot.slice(12)) {
            const mark = el('i');
            mark.style.top = (100 * (ln - 1) / Math.max(lines.length, 1)).toFixed(2) + '%';
            mark.style.opacity = '0.3';
            ruler.append(mark);
        }
        if (line > 0) goLine(line);
    }

    function goLine(ln)
    {
        const row = document.getElementById('L' + ln);
        if (row) row.scrollIntoView({block: 'center'});
    }

    function closeSource() { $('source').hidden = true; }

    /* --- the selection ----------------------------------------------------------------- */
    function recompute()
    {
        const p = st.p;
        st.sw = KProfile.stackWeights(p, st.sel);
        if (st.view === 'time') {
            const order = KProfile.timeOrder(p, st.sel);
            st.lay = KLayout.timeOrder(st.fstacks, order, p.samples.stack, p.samples.thread,
                                       p.samples.values[st.sel.type], null);
        } else {
            st.lay = KLayout.leftHeavy(st.fstacks, st.sw.w, st.sw.cnt, st.fnRank);
        }
        st.rows = KStats.hotFunctions(p, st.fns, st.sw, withErrors());
        $('empty').hidden = st.sw.total > 0;
        $('empty').textContent = p.kind === 'heap' && !(st.sw.total > 0)
            ? 'No memory of this sample type (at exit, in-use memory may be none): try another sample type.'
            : 'Nothing in this selection.';
        summary();
        view.setLayout(st.lay);
        onZoom(-1);
        if (st.selectedFn >= 0) view.mark = fnMask(st.selectedFn);
        applySearch();
        renderHot();
    }

    function summary()
    {
        const p = st.p, t = p.types[st.sel.type];
        const parts = [p.kind === 'heap' ? 'heap profile' : 'CPU profile',
                       KFormat.count(st.sw.n) + (p.kind === 'heap' ? ' sampled stack' : ' sample') + (st.sw.n === 1 ? '' : 's'),
                       t.name + ' ' + KFormat.value(st.sw.total, t.unit),
                       p.threads.length + (p.threads.length === 1 ? ' thread' : ' threads')];
        if (p.meta.rate_hz) parts.push(KFormat.count(p.meta.rate_hz) + ' Hz');
        if (p.meta.dropped) parts.push(KFormat.count(p.meta.dropped) + ' samples dropped');
        if (p.kind === 'cpu' && st.sw.n > 0 && st.sw.n < 100) parts.push('low confidence: under 100 samples');
        if (p.meta.untimed_samples > 0) /* a long run: its row table filled at that time */
            parts.push('time order ends at ' + KFormat.value(p.meta.timed_end_ns, 'nanoseconds') +
                       ': the ' + KFormat.count(p.meta.untimed_samples) +
                       ' samples after it are counted per stack, without time' +
                       (st.view === 'time' ? ' (drawn last in each thread)' : ''));
        $('summary').textContent = parts.join(' · ');
    }

    /* How whole the stacks are: the report's own lines (meta.stacks.text), when it
     * has anything to say; the cut stacks sit under [incomplete stack] in the graph. */
    function stacksBanner()
    {
        const sk = st.p.meta.stacks, b = $('stacks-banner');
        const text = sk && typeof sk.text === 'string'
            ? sk.text.split('\n').map((l) => l.trim()).filter((l) => l).join('\n') : '';
        b.textContent = text;
        b.hidden = !text;
    }

    function fillControls()
    {
        const p = st.p;
        stacksBanner();
        $('title').textContent = p.title;
        document.title = 'kestrel · ' + p.title;
        const type = $('type');
        p.types.forEach((t, i) => type.append(new Option(t.name + ' (' + t.unit + ')', String(i))));
        type.value = String(st.sel.type);
        const th = $('thread');
        th.append(new Option('all threads', '-1'));
        p.threads.forEach((t, i) => th.append(new Option(threadName(t), String(i))));
        const pr = $('process');
        pr.append(new Option('all processes', '-1'));
        p.processes.forEach((q, i) => pr.append(new Option(processName(q) + (q.chain ? ' (' + q.chain + ')' : ''), String(i))));
        $('process-box').hidden = p.processes.length < 2;
        /* CPU questions get CPU samples first: on-CPU unless the user asks for waiting. */
        $('state').value = st.sel.state;
        $('state-box').hidden = p.kind !== 'cpu';
        if (p.kind === 'heap') $('view').options[1].disabled = true; /* no times in a heap profile */
        const onChange = (fn) => (e) => {
            fn(e.target.value);
            recompute();
        };
        type.addEventListener('change', onChange((v) => { st.sel.type = +v; }));
        th.addEventListener('change', onChange((v) => { st.sel.thread = +v; }));
        pr.addEventListener('change', onChange((v) => { st.sel.process = +v; }));
        $('state').addEventListener('change', onChange((v) => { st.sel.state = v; }));
        $('view').addEventListener('change', onChange((v) => { st.view = v; }));
        let timer = 0;
        $('search').addEventListener('input', () => {
            clearTimeout(timer);
            timer = setTimeout(applySearch, 80);
        });
        for (const b of $('hot').tHead.querySelectorAll('button'))
            b.addEventListener('click', () => {
                const k = b.dataset.key;
                st.sort = {key: k, desc: st.sort.key === k ? !st.sort.desc : k !== 'name'};
                renderHot();
            });
        $('source-close').addEventListener('click', closeSource);
        document.addEventListener('keydown', (e) => {
            if (e.key !== 'Escape') return;
            if (!$('source').hidden) closeSource();
            else if (document.activeElement === $('search') && $('search').value) {
                $('search').value = '';
                applySearch();
            } else view.back();
        });
    }

    let view;
    function main()
    {
        const raw = $('kestrel-data').textContent;
        view = new KRender.FlameView($('flame'), {
            label, onZoom, onHover, frameColor: (fn) => st.fnColors[fn],
        });
        try {
            st.p = KProfile.decode(JSON.parse(raw));
        } catch (e) {
            $('empty').hidden = false;
            /* Spliced so that the placeholder occurs once in the page, where the data goes. */
            $('empty').textContent = raw.trim() === '@KESTREL_' + 'DATA@'
                ? 'No profile in this page: kestrel view INPUT writes one.' : String(e.message || e);
            return;
        }
        st.sel.type = st.p.defaultType;
        st.fns = KStats.functions(st.p.frames);
        /* Boxes merge by function (file, name); its colour and rank are its frames'. */
        const rank = KColors.rankFrames(st.p.frames), colors = KColors.frameColors(st.p.frames);
        st.fnRank = Int32Array.from(st.fns.list, (fn) => rank[fn.frames[0]]);
        st.fnColors = st.p.diff ? st.fns.list.map((fn) => KColors.diffColor(diffOf(fn)))
                                : st.fns.list.map((fn) => colors[fn.frames[0]]);
        st.fstacks = st.p.stacks.map((s) => s.map((f) => st.fns.ofFrame[f]));
        fillControls();
        recompute();
        /* For tests and scripts: where a frame is drawn, and how long the last draw took. */
        window.kestrelViewer = {
            boxes: (name) => {
                const out = [];
                for (let v = 0; v < st.lay.n; v++)
                    if (st.lay.frame[v] >= 0 && st.fns.list[st.lay.frame[v]].name === name) out.push(view.rectOf(v));
                return out.sort((a, b) => b.w - a.w);
            },
            lastDrawMs: () => view.lastDrawMs,
            firstDrawAt: () => view.firstDrawAt,
            pan: (dx, dy) => { view.pan(dx, dy); view.draw(); return view.lastDrawMs; },
            zoomAround: (cx, f) => { view.zoomAround(cx, f); view.draw(); return view.lastDrawMs; },
        };
    }
    main();
})();
