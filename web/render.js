/* kestrel viewer: the canvas flame graph (root at the top). Draws only the rows and
 * the boxes on screen (binary search per row); boxes narrower than a pixel merge into
 * one grey run, so a profile with tens of thousands of stacks draws in time
 * proportional to the screen, not to the profile. Labels go through fillText: a
 * frame name is never markup. */
'use strict';
const KRender = (() => {
    const ROW = 18, MIN_PX = 1, DUST = '#d9d4ca', DIM_ALPHA = 0.22;

    function FlameView(canvas, hooks)
    {
        this.canvas = canvas;
        this.ctx = canvas.getContext('2d', {alpha: false});
        this.hooks = hooks; /* label(node), frameColor(frame), onZoom(node), onHover(node, ev) */
        this.lay = null;
        this.start = 0;
        this.end = 1;
        this.scrollY = 0;
        this.zoomed = -1;
        this.zoomStack = [];
        this.dim = null; /* per frame: 1 = drawn bright; null = everything bright */
        this.mark = null; /* per frame: 1 = outlined (the selected function) */
        this.pending = false;
        this.lastDrawMs = 0;
        this.bind();
    }

    FlameView.prototype.setLayout = function (lay) {
        this.lay = lay;
        this.zoomStack = [];
        this.zoomed = -1;
        this.start = 0;
        this.end = Math.max(lay.width, 1e-9);
        this.scrollY = 0;
        this.redraw();
    };

    FlameView.prototype.size = function () {
        const r = this.canvas.getBoundingClientRect();
        return {w: Math.max(1, r.width), h: Math.max(1, r.height)};
    };

    FlameView.prototype.redraw = function () {
        if (this.pending) return;
        this.pending = true;
        requestAnimationFrame(() => {
            this.pending = false;
            this.draw();
        });
    };

    FlameView.prototype.draw = function () {
        const t0 = performance.now();
        const {w, h} = this.size();
        const dpr = window.devicePixelRatio || 1;
        if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
            this.canvas.width = Math.round(w * dpr);
            this.canvas.height = Math.round(h * dpr);
        }
        const ctx = this.ctx;
        ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
        ctx.fillStyle = '#fbfaf7';
        ctx.fillRect(0, 0, w, h);
        const lay = this.lay;
        if (!lay || !(lay.width > 0)) return;
        this.clampScroll(h);
        ctx.font = '11px ui-monospace, "DejaVu Sans Mono", monospace';
        ctx.textBaseline = 'middle';
        if (!this.charW) this.charW = ctx.measureText('MMMMMMMMMM').width / 10;
        const scale = w / (this.end - this.start);
        const first = Math.floor(this.scrollY / ROW);
        const last = Math.min(lay.maxDepth, Math.ceil((this.scrollY + h) / ROW));
        const hk = this.hooks;
        for (let d = first; d <= last; d++) {
            const row = lay.rows[d];
            if (!row) continue;
            const y = d * ROW - this.scrollY;
            let dustFrom = -1, dustTo = -1;
            const flushDust = () => {
                if (dustFrom < 0) return;
                ctx.globalAlpha = 1;
                ctx.fillStyle = DUST;
                ctx.fillRect(dustFrom, y, Math.max(dustTo - dustFrom, MIN_PX), ROW - 1);
                dustFrom = -1;
            };
            for (let k = KLayout.firstVisible(lay, row, this.start); k < row.length; k++) {
                const v = row[k];
                const x0 = lay.x[v];
                if (x0 >= this.end) break;
                const px = (x0 - this.start) * scale, pw = lay.total[v] * scale;
                if (pw < MIN_PX) {
                    if (dustFrom >= 0 && px <= dustTo + 1) {
                        dustTo = Math.max(dustTo, px + pw);
                    } else {
                        flushDust();
                        dustFrom = px;
                        dustTo = px + pw;
                    }
                    continue;
                }
                flushDust();
                const f = lay.frame[v];
                const bright = !this.dim || (f >= 0 && this.dim[f]);
                ctx.globalAlpha = bright ? 1 : DIM_ALPHA;
                ctx.fillStyle = f >= 0 ? hk.frameColor(f) : '#c9c2b4';
                const bx = Math.max(px, 0), bw = Math.min(px + pw, w) - bx;
                ctx.fillRect(bx, y, Math.max(bw - (pw > 3 ? 1 : 0), MIN_PX), ROW - 1);
                if (this.mark && f >= 0 && this.mark[f]) {
                    ctx.globalAlpha = 1;
                    ctx.strokeStyle = '#222';
                    ctx.lineWidth = 2;
                    ctx.strokeRect(bx + 1, y + 1, Math.max(bw - 3, 1), ROW - 3);
                }
                if (bw > 3 * this.charW + 6) {
                    const max = Math.floor((bw - 6) / this.charW);
                    let s = hk.label(v);
                    if (s.length > max) s = s.slice(0, Math.max(max - 1, 1)) + '…';
                    ctx.globalAlpha = bright ? 1 : 0.45;
                    ctx.fillStyle = '#1b1b1b';
                    ctx.fillText(s, bx + 3, y + ROW / 2);
                }
            }
            flushDust();
        }
        ctx.globalAlpha = 1;
        const t1 = performance.now();
        this.lastDrawMs = t1 - t0;
        if (this.firstDrawAt === undefined) this.firstDrawAt = t1; /* since navigation start */
    };

    FlameView.prototype.clampScroll = function (h) {
        const maxY = Math.max(0, (this.lay.maxDepth + 1) * ROW - h + ROW);
        this.scrollY = Math.min(Math.max(this.scrollY, 0), maxY);
    };

    FlameView.prototype.nodeAt = function (cx, cy) {
        if (!this.lay) return -1;
        const {w} = this.size();
        const d = Math.floor((cy + this.scrollY) / ROW);
        const x = this.start + (cx / w) * (this.end - this.start);
        return KLayout.hit(this.lay, d, x);
    };

    /* The on-screen rectangle of a node, in CSS pixels relative to the canvas. */
    FlameView.prototype.rectOf = function (v) {
        const {w} = this.size();
        const scale = w / (this.end - this.start);
        return {x: (this.lay.x[v] - this.start) * scale, y: this.lay.depth[v] * ROW - this.scrollY,
                w: this.lay.total[v] * scale, h: ROW - 1};
    };

    FlameView.prototype.zoomTo = function (v, remember) {
        if (v < 0 || !this.lay) return;
        if (remember !== false) this.zoomStack.push({start: this.start, end: this.end, node: this.zoomed});
        this.zoomed = v;
        this.start = this.lay.x[v];
        this.end = this.start + Math.max(this.lay.total[v], 1e-9);
        this.hooks.onZoom(v);
        this.redraw();
    };

    FlameView.prototype.back = function () {
        const prev = this.zoomStack.pop();
        if (!prev) return false;
        this.start = prev.start;
        this.end = prev.end;
        this.zoomed = prev.node;
        this.hooks.onZoom(prev.node);
        this.redraw();
        return true;
    };

    FlameView.prototype.reset = function () {
        this.zoomStack = [];
        this.zoomed = -1;
        this.start = 0;
        this.end = Math.max(this.lay ? this.lay.width : 1, 1e-9);
        this.hooks.onZoom(-1);
        this.redraw();
    };

    /* Pans by a number of CSS pixels, keeping the view inside the profile. */
    FlameView.prototype.pan = function (dx, dy) {
        const {w} = this.size();
        const span = this.end - this.start;
        let s = this.start - (dx / w) * span;
        s = Math.min(Math.max(s, 0), Math.max(this.lay.width - span, 0));
        this.start = s;
        this.end = s + span;
        this.scrollY += dy;
        this.redraw();
    };

    FlameView.prototype.zoomAround = function (cx, factor) {
        const {w} = this.size();
        const span = this.end - this.start;
        const at = this.start + (cx / w) * span;
        const next = Math.min(Math.max(span * factor, this.lay.width * 1e-9), this.lay.width);
        this.start = Math.max(0, at - (cx / w) * next);
        this.end = Math.min(this.lay.width, this.start + next);
        this.redraw();
    };

    FlameView.prototype.bind = function () {
        const c = this.canvas;
        let drag = null;
        c.addEventListener('mousedown', (e) => {
            drag = {x: e.clientX, y: e.clientY, moved: false};
        });
        window.addEventListener('mousemove', (e) => {
            if (drag && this.lay) {
                const dx = e.clientX - drag.x, dy = e.clientY - drag.y;
                if (drag.moved || Math.abs(dx) + Math.abs(dy) > 4) {
                    drag.moved = true;
                    c.classList.add('dragging');
                    this.pan(dx, -dy);
                    drag.x = e.clientX;
                    drag.y = e.clientY;
                    this.hooks.onHover(-1, e);
                    return;
                }
            }
            if (e.target !== c) return;
            const r = c.getBoundingClientRect();
            this.hooks.onHover(this.nodeAt(e.clientX - r.left, e.clientY - r.top), e);
        });
        window.addEventListener('mouseup', (e) => {
            if (!drag) return;
            const wasDrag = drag.moved;
            drag = null;
            c.classList.remove('dragging');
            if (wasDrag || e.target !== c) return;
            const r = c.getBoundingClientRect();
            const v = this.nodeAt(e.clientX - r.left, e.clientY - r.top);
            if (v >= 0) this.zoomTo(v);
        });
        c.addEventListener('mouseleave', (e) => this.hooks.onHover(-1, e));
        c.addEventListener('wheel', (e) => {
            if (!this.lay) return;
            e.preventDefault();
            const r = c.getBoundingClientRect();
            if (e.ctrlKey || e.metaKey) this.zoomAround(e.clientX - r.left, Math.exp(e.deltaY * 0.002));
            else if (e.shiftKey) this.pan(-e.deltaY, 0);
            else this.pan(-e.deltaX, e.deltaY);
        }, {passive: false});
        window.addEventListener('resize', () => this.redraw());
    };

    return {FlameView, ROW};
})();
