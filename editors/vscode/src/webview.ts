/* The webview's page: web/viewer.html (copied into media/web when the extension is
 * built, never edited) with its stylesheet and scripts loaded from the extension's own
 * files instead of inlined, a Content-Security-Policy that allows only those, the
 * host script that carries clicks to the editor, and the profile's data. Pure. */

/* The data of a page `kestrel view` wrote: the JSON of its #kestrel-data element. The
 * CLI escapes `<` inside it (docs/viewer-data.md), so it ends at the first </script>. */
export function dataOfViewerPage(html: string): string {
    const open = '<script id="kestrel-data" type="application/json">';
    const at = html.indexOf(open);
    if (at < 0) throw new Error('not a kestrel viewer page (no #kestrel-data)');
    const end = html.indexOf('</script>', at + open.length);
    if (end < 0) throw new Error('the viewer page is cut short');
    return html.slice(at + open.length, end);
}

export function webviewPage(template: string, opts: { cspSource: string; nonce?: string; uri: (file: string) => string; hostScript: string; data: string }): string {
    if (/<\/script/i.test(opts.data)) throw new Error('the profile data would close its element');
    const csp = "default-src 'none'; script-src " + opts.cspSource + '; style-src ' + opts.cspSource + '; img-src ' + opts.cspSource + ' data:';
    let sawCsp = false, sawData = false, sawHost = false;
    const out = template.split('\n').map((line) => {
        if (/^<meta http-equiv="Content-Security-Policy"/.test(line)) {
            sawCsp = true;
            return '<meta http-equiv="Content-Security-Policy" content="' + csp + '">';
        }
        let m = /^<link rel="stylesheet" href="([^"]+)">$/.exec(line);
        if (m) return '<link rel="stylesheet" href="' + opts.uri(m[1]) + '">';
        m = /^<script src="([^"]+)"><\/script>$/.exec(line);
        if (m) {
            const s = '<script src="' + opts.uri(m[1]) + '"></script>';
            if (sawHost) return s;
            sawHost = true;
            return '<script src="' + opts.hostScript + '"></script>\n' + s;
        }
        if (line.includes('@KESTREL_DATA@')) {
            sawData = true;
            return line.replace('@KESTREL_DATA@', () => opts.data);
        }
        return line;
    });
    if (!sawCsp || !sawData || !sawHost) throw new Error('web/viewer.html has changed shape: no CSP, data or script line');
    return out.join('\n');
}
