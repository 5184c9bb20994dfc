/* kestrel in VS Code: Profile Current File (kestrel run), Open Profile…, Record
 * Command…, Clear Heat. The flame graph is web/'s viewer in a webview; the heat of the
 * lines comes from STEM.profile.json. */
import * as vscode from 'vscode';
import * as cp from 'child_process';
import * as fs from 'fs';
import * as os from 'os';
import * as path from 'path';
import { Heat } from './heat';
import { classify } from './outcome';
import { resolveKestrel, resolveSource } from './paths';
import { Settings, profileName, readSettings, recordCommand, runCommand, sourceLanguage, splitCommandLine, stemName } from './settings';
import { TaskExec, taskProgram } from './tasks';
import { parseSummary, statusText, tooSmall } from './summary';
import { dataOfViewerPage, webviewPage } from './webview';

let out: vscode.OutputChannel;
let heat: Heat;
let status: vscode.StatusBarItem;
let media: vscode.Uri;

export function activate(ctx: vscode.ExtensionContext): void {
    out = vscode.window.createOutputChannel('kestrel');
    heat = new Heat();
    status = vscode.window.createStatusBarItem(vscode.StatusBarAlignment.Left, 10);
    status.command = 'kestrel.clearHeat';
    media = vscode.Uri.joinPath(ctx.extensionUri, 'media');
    ctx.subscriptions.push(out, heat, status,
        vscode.commands.registerCommand('kestrel.profileCurrentFile', () => guard(profileCurrentFile)),
        vscode.commands.registerCommand('kestrel.openProfile', (uri?: vscode.Uri) => guard(() => openProfile(uri))),
        vscode.commands.registerCommand('kestrel.recordCommand', (line?: string) => guard(() => recordCommandLine(line))),
        vscode.commands.registerCommand('kestrel.clearHeat', () => { heat.clear(); status.hide(); }));
}

export function deactivate(): void {}

async function guard(f: () => Promise<void>): Promise<void> {
    try {
        await f();
    } catch (e) {
        void vscode.window.showErrorMessage('kestrel: ' + (e as Error).message);
    }
}

function settings(): Settings {
    const c = vscode.workspace.getConfiguration('kestrel');
    return readSettings((k) => c.get(k));
}

function folders(): string[] {
    return (vscode.workspace.workspaceFolders || []).map((f) => f.uri.fsPath);
}

function kestrelBinary(s: Settings): string {
    const r = resolveKestrel(s.path, process.env.PATH || '', folders(), (p) => {
        try { fs.accessSync(p, fs.constants.X_OK); return fs.statSync(p).isFile(); } catch { return false; }
    });
    if ('error' in r) throw new Error(r.error);
    return r.path;
}

/* Where a run's exports go: a folder of its own under the temporary directory. */
function stemFor(name: string): string {
    const dir = path.join(os.tmpdir(), 'kestrel-vscode', name);
    fs.mkdirSync(dir, { recursive: true });
    return path.join(dir, name);
}

interface Ran { code: number | null; signal: string | null; stderr: string; cancelled: boolean }

/* Runs kestrel under a cancellable progress notification; its output goes to the
 * output channel. Cancelling ends kestrel and the program (their process group). */
function runKestrel(bin: string, args: string[], env: Record<string, string>, cwd: string, title: string): Thenable<Ran> {
    out.appendLine('$ ' + [bin, ...args].join(' ') + (Object.keys(env).length ? '   (' + Object.entries(env).map(([k, v]) => k + '=' + v).join(' ') + ')' : ''));
    return vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title, cancellable: true }, (_p, token) =>
        new Promise<Ran>((resolve) => {
            let stderr = '', cancelled = false;
            const child = cp.spawn(bin, args, { cwd, env: { ...process.env, ...env }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
            child.stdout.on('data', (b: Buffer) => out.append(b.toString()));
            child.stderr.on('data', (b: Buffer) => { stderr += b.toString(); out.append(b.toString()); });
            token.onCancellationRequested(() => {
                cancelled = true;
                try { process.kill(-(child.pid as number), 'SIGTERM'); } catch { /* already gone */ }
            });
            child.on('error', (e) => resolve({ code: 127, signal: null, stderr: 'kestrel: ' + bin + ': ' + e.message + '\n', cancelled }));
            child.on('close', (code, signal) => resolve({ code, signal, stderr, cancelled }));
        }));
}

/* Tells the user what went wrong; true when there is still a profile to show. */
function report(r: Ran): boolean {
    if (r.cancelled) {
        void vscode.window.showInformationMessage('kestrel: cancelled');
        return false;
    }
    const o = classify(r.code, r.signal, r.stderr);
    switch (o.kind) {
    case 'ok':
        return true;
    case 'build':
        out.appendLine('--- compiler output ---\n' + o.compilerOutput);
        void vscode.window.showErrorMessage('kestrel: ' + o.message, 'Show Output').then((a) => { if (a) out.show(true); });
        return false;
    case 'program':
        void vscode.window.showWarningMessage('kestrel: ' + o.message + (o.profiled ? '; showing what was profiled' : ''), 'Show Output')
            .then((a) => { if (a) out.show(true); });
        return o.profiled;
    default:
        void vscode.window.showErrorMessage('kestrel: ' + o.message, 'Show Output').then((a) => { if (a) out.show(true); });
        return false;
    }
}

async function profileCurrentFile(): Promise<void> {
    const ed = vscode.window.activeTextEditor;
    if (!ed) throw new Error('no file is open: open a C or C++ file first');
    const doc = ed.document;
    if ((doc.languageId !== 'c' && doc.languageId !== 'cpp') || doc.uri.scheme !== 'file')
        throw new Error(doc.fileName + ' is not a C or C++ file on disk');
    if (!sourceLanguage(doc.fileName))
        throw new Error(path.basename(doc.fileName) + ': kestrel run compiles .c, .cc, .cpp, .cxx and .C files; rename it, or build it yourself and use Kestrel: Record Command…');
    if (doc.isDirty && !(await doc.save())) throw new Error('could not save ' + doc.fileName);
    const s = settings();
    const bin = kestrelBinary(s);
    const name = stemName(doc.fileName);
    const stem = stemFor(name);
    const cmd = runCommand(s, doc.fileName, stem);
    const r = await runKestrel(bin, cmd.args, cmd.env, path.dirname(doc.fileName), 'kestrel: profiling ' + path.basename(doc.fileName));
    if (report(r)) {
        await show(stem, name, path.dirname(doc.fileName), ed.viewColumn);
        offerHeap(stem, name, path.dirname(doc.fileName));
    }
}

/* What a task runs, or null for one kestrel cannot record (a custom execution). */
function taskExec(t: vscode.Task): TaskExec | null {
    const ex = t.execution;
    const str = (a: string | vscode.ShellQuotedString) => (typeof a === 'string' ? a : a.value);
    if (ex instanceof vscode.ProcessExecution)
        return { kind: 'process', command: ex.process, args: ex.args, cwd: ex.options?.cwd, env: ex.options?.env };
    if (ex instanceof vscode.ShellExecution) {
        const base = { kind: 'shell' as const, cwd: ex.options?.cwd, env: ex.options?.env };
        if (ex.commandLine) return { ...base, command: ex.commandLine, args: [] };
        if (ex.command) return { ...base, command: str(ex.command), args: (ex.args || []).map(str) };
    }
    return null;
}

async function recordCommandLine(given?: string): Promise<void> {
    let argv: string[] | undefined, cwd = folders()[0] || os.homedir(), env: Record<string, string> = {};
    if (given !== undefined) argv = splitCommandLine(given);
    else {
        type Item = vscode.QuickPickItem & { task?: vscode.Task; ex?: TaskExec };
        const items: Item[] = [{ label: '$(terminal) Type a command line…' }];
        for (const task of await vscode.tasks.fetchTasks()) {
            const ex = taskExec(task);
            if (ex) items.push({ label: task.name, description: task.source, detail: [ex.command, ...ex.args].join(' '), task, ex });
        }
        const pick = await vscode.window.showQuickPick(items, { placeHolder: 'the program to record: a task or a command line' });
        if (!pick) return;
        if (!pick.task || !pick.ex) {
            const line = await vscode.window.showInputBox({ prompt: 'program and arguments (run without a shell)', placeHolder: './build/app --input data.txt' });
            if (!line) return;
            argv = splitCommandLine(line);
        } else {
            const scope = pick.task.scope;
            const folder = scope && typeof scope === 'object' ? scope.uri.fsPath : cwd;
            ({ argv, cwd, env } = taskProgram(pick.task.name, pick.ex, { workspaceFolder: folder, userHome: os.homedir(), env: process.env }));
        }
    }
    const s = settings();
    const bin = kestrelBinary(s);
    const name = stemName(argv[0] || 'program');
    const stem = stemFor(name);
    const cmd = recordCommand(s, argv, stem);
    const r = await runKestrel(bin, cmd.args, { ...env, ...cmd.env }, cwd, 'kestrel: recording ' + argv.join(' '));
    if (report(r)) {
        await show(stem, name, cwd);
        offerHeap(stem, name, cwd);
    }
}

async function openProfile(uri?: vscode.Uri): Promise<void> {
    if (!uri) {
        const picked = await vscode.window.showOpenDialog({
            canSelectMany: false, openLabel: 'Open Profile',
            filters: { 'kestrel profiles': ['json', 'gz', 'pb'], 'all files': ['*'] },
        });
        if (!picked) return;
        uri = picked[0];
    }
    const file = uri.fsPath;
    const dir = path.dirname(file);
    if (file.endsWith('.profile.json') && !file.endsWith('.raw.json')) {
        /* A summary alone holds no stacks: the heat, and the flame graph when the run's
         * page is beside it. */
        const stem = file.slice(0, -'.profile.json'.length);
        await show(stem, path.basename(stem), dir);
        return;
    }
    const s = settings();
    const bin = kestrelBinary(s);
    const name = profileName(file);
    const stem = stemFor(name);
    for (const [args, what] of [[['view', '-o', stem + '.html', file], 'reading'], [['export', '--format', 'summary', '-o', stem + '.profile.json', file], 'summarizing']] as const) {
        const r = await runKestrel(bin, [...args], {}, dir, 'kestrel: ' + what + ' ' + path.basename(file));
        if (!report(r)) return;
    }
    await show(stem, name, dir);
}

/* The heat from STEM.profile.json, the status bar, and the flame graph from STEM.html,
 * beside the editor of `source` (the profiled file's column; else the active editor's). */
async function show(stem: string, name: string, baseDir: string, source = vscode.window.activeTextEditor?.viewColumn): Promise<void> {
    const summaryFile = stem + '.profile.json';
    const s = parseSummary(fs.readFileSync(summaryFile, 'utf8'));
    const small = tooSmall(s);
    if (small) void vscode.window.showWarningMessage('kestrel: ' + small);
    const dirs = { profileDir: baseDir, folders: folders() };
    const exists = (p: string) => { try { return fs.statSync(p).isFile(); } catch { return false; } };
    heat.set(s, (f) => resolveSource(f, dirs, exists));
    status.text = '$(flame) ' + statusText(s);
    status.tooltip = 'kestrel: ' + summaryFile + ' (click to clear the heat)';
    status.show();
    if (fs.existsSync(stem + '.html')) openFlameGraph(name, dataOfViewerPage(fs.readFileSync(stem + '.html', 'utf8')), dirs, source);
}

/* With kestrel.heap on, the run also wrote a heap profile (STEM.heap.*; a run without
 * it removes an earlier run's): offered in a notification rather than put over the CPU
 * graph and heat. */
function offerHeap(stem: string, name: string, baseDir: string): void {
    const heapStem = stem + '.heap';
    if (!fs.existsSync(heapStem + '.profile.json')) return;
    let what = '';
    try {
        what = ': ' + statusText(parseSummary(fs.readFileSync(heapStem + '.profile.json', 'utf8'))).replace(/^kestrel: heap /, '');
    } catch { /* said when it is shown */ }
    void vscode.window.showInformationMessage('kestrel: the heap profile of ' + name + what, 'Show Heap Graph').then((a) => {
        if (a) void guard(() => show(heapStem, name + '.heap', baseDir));
    });
}

let panel: vscode.WebviewPanel | undefined;

function openFlameGraph(name: string, data: string, dirs: { profileDir: string; folders: string[] }, source?: vscode.ViewColumn): void {
    if (!panel) {
        panel = vscode.window.createWebviewPanel('kestrel.flameGraph', 'kestrel: ' + name, { viewColumn: vscode.ViewColumn.Beside, preserveFocus: true }, {
            enableScripts: true, retainContextWhenHidden: true, localResourceRoots: [media],
        });
        panel.onDidDispose(() => { panel = undefined; });
    } else if (source !== undefined && panel.viewColumn === source) {
        /* The panel shares the profiled file's group: moved to the group beside it, so
         * that the graph does not cover the heat of the file; a new group only when
         * there is no other (each new one would make the graph narrower). */
        const groups = vscode.window.tabGroups.all.length;
        panel.reveal(source < groups ? source + 1 : source > 1 ? source - 1 : vscode.ViewColumn.Beside, true);
    } else {
        /* Shown where it is, even when another editor covers it there: a hidden webview
         * has no size to draw the new profile in. */
        panel.reveal(undefined, true);
    }
    const p = panel;
    p.title = 'kestrel: ' + name;
    const web = vscode.Uri.joinPath(media, 'web');
    const template = fs.readFileSync(vscode.Uri.joinPath(web, 'viewer.html').fsPath, 'utf8');
    p.webview.html = webviewPage(template, {
        cspSource: p.webview.cspSource,
        uri: (f) => p.webview.asWebviewUri(vscode.Uri.joinPath(web, f)).toString(),
        hostScript: p.webview.asWebviewUri(vscode.Uri.joinPath(media, 'host.js')).toString(),
        data,
    });
    sourceHandler?.dispose();
    sourceHandler = p.webview.onDidReceiveMessage((m: { type?: string; file?: unknown; line?: unknown }) => {
        if (m.type === 'cspViolation') out.appendLine('kestrel: the flame graph page refused ' + String((m as { what?: unknown }).what));
        if (m.type !== 'openSource' || typeof m.file !== 'string') return;
        void guard(() => openSource(m.file as string, typeof m.line === 'number' ? m.line : 0, dirs));
    });
}
let sourceHandler: vscode.Disposable | undefined;

async function openSource(file: string, line: number, dirs: { profileDir: string; folders: string[] }): Promise<void> {
    const exists = (p: string) => { try { return fs.statSync(p).isFile(); } catch { return false; } };
    let where = resolveSource(file, dirs, exists);
    if (!where) {
        const found = await vscode.workspace.findFiles('**/' + path.basename(file), '**/node_modules/**', 50);
        where = resolveSource(file, { ...dirs, candidates: found.map((u) => u.fsPath) }, () => false);
    }
    if (!where) throw new Error(file + ' is not on this machine nor in the workspace');
    const doc = await vscode.workspace.openTextDocument(where);
    const at = new vscode.Position(Math.max(0, Math.min(line - 1, doc.lineCount - 1)), 0);
    /* The first group, or the second when the graph is in the first: the source opens
     * beside the graph, never over it. */
    const column = panel?.viewColumn === vscode.ViewColumn.One ? vscode.ViewColumn.Two : vscode.ViewColumn.One;
    await vscode.window.showTextDocument(doc, { viewColumn: column, selection: new vscode.Range(at, at), preserveFocus: false });
}
