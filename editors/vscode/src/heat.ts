/* The after-line heat decorations and their overview-ruler marks, per file, following
 * edits until the file is profiled again or the heat is cleared. */
import * as vscode from 'vscode';
import { LineHeat, Summary, heatForFile, hotFiles } from './summary';
import { countNewlines, shiftLines } from './linemap';

/* Three levels, by share of the profile: the colour says how hot at a glance. */
const LEVELS = [
    { min: 0.2, color: 'rgba(230, 60, 30, 0.9)', bg: 'rgba(230, 60, 30, 0.16)' },
    { min: 0.05, color: 'rgba(235, 130, 30, 0.9)', bg: 'rgba(235, 130, 30, 0.10)' },
    { min: 0, color: 'rgba(220, 180, 40, 0.9)', bg: 'rgba(220, 180, 40, 0.06)' },
];

export class Heat implements vscode.Disposable {
    private types: vscode.TextEditorDecorationType[];
    private byFile = new Map<string, LineHeat[]>();
    private subs: vscode.Disposable[] = [];

    constructor() {
        this.types = LEVELS.map((l) => vscode.window.createTextEditorDecorationType({
            isWholeLine: true,
            backgroundColor: l.bg,
            overviewRulerColor: l.color,
            overviewRulerLane: vscode.OverviewRulerLane.Right,
            after: { color: l.color, margin: '0 0 0 2em', fontStyle: 'italic' },
        }));
        this.subs.push(
            vscode.window.onDidChangeVisibleTextEditors((eds) => eds.forEach((e) => this.paint(e))),
            vscode.workspace.onDidChangeTextDocument((ev) => this.follow(ev)),
        );
    }

    /* Replaces the heat of every file the profile names with the profile's; `resolve`
     * says which file on disk a path of the profile is (null: none, as libc's). */
    set(s: Summary, resolve: (profilePath: string) => string | null): string[] {
        const where = new Map<string, string | null>();
        for (const f of hotFiles(s)) where.set(f, resolve(f));
        const files = [...new Set([...where.values()].filter((p): p is string => !!p))];
        for (const file of files) this.byFile.set(file, heatForFile(s, (f) => where.get(f) === file));
        vscode.window.visibleTextEditors.forEach((e) => this.paint(e));
        return files;
    }

    linesOf(file: string): LineHeat[] {
        return this.byFile.get(file) || [];
    }

    clear(): void {
        this.byFile.clear();
        vscode.window.visibleTextEditors.forEach((e) => this.types.forEach((t) => e.setDecorations(t, [])));
    }

    private follow(ev: vscode.TextDocumentChangeEvent): void {
        const file = ev.document.uri.fsPath;
        let lines = this.byFile.get(file);
        if (!lines || !ev.contentChanges.length) return;
        /* The changes of one event come last-in-document first, so each one's range is
         * still in the coordinates the earlier ones left. */
        for (const c of ev.contentChanges)
            lines = shiftLines(lines, { startLine: c.range.start.line, endLine: c.range.end.line, addedLines: countNewlines(c.text) });
        this.byFile.set(file, lines);
        vscode.window.visibleTextEditors.filter((e) => e.document === ev.document).forEach((e) => this.paint(e));
    }

    private paint(e: vscode.TextEditor): void {
        const lines = this.byFile.get(e.document.uri.fsPath) || [];
        const per: vscode.DecorationOptions[][] = LEVELS.map(() => []);
        for (const h of lines) {
            if (h.line >= e.document.lineCount) continue;
            const k = LEVELS.findIndex((l) => h.share >= l.min);
            const end = e.document.lineAt(h.line).range.end;
            per[k].push({
                range: new vscode.Range(end, end),
                hoverMessage: h.hover,
                renderOptions: { after: { contentText: h.text } },
            });
        }
        this.types.forEach((t, k) => e.setDecorations(t, per[k]));
    }

    dispose(): void {
        this.subs.forEach((d) => d.dispose());
        this.types.forEach((t) => t.dispose());
    }
}
