/* A workspace task (tasks.json, or a task provider's) as the program Record Command…
 * records: its words, folder and environment, with the variables VS Code fills in.
 * kestrel records one program run without a shell, so a shell task whose command line
 * needs a shell (a pipe, a redirection, `&&`, an expansion) is refused with the
 * reason rather than run differently from the task. Pure. */
import * as path from 'path';
import { splitCommandLine } from './settings';

/* What the task runs, taken from vscode's ProcessExecution or ShellExecution. */
export interface TaskExec {
    kind: 'process' | 'shell';
    command: string; /* process: the program; shell: the command, or the whole command line without args */
    args: string[];
    cwd?: string;
    env?: Record<string, string>;
}

export interface TaskVars {
    workspaceFolder: string;
    userHome: string;
    env: Record<string, string | undefined>;
}

export interface TaskProgram {
    argv: string[];
    cwd: string;
    env: Record<string, string>;
}

/* ${workspaceFolder}, ${workspaceFolderBasename}, ${userHome}, ${pathSeparator} and
 * ${env:NAME}; any other (${file}, ${input:…}, ${config:…}) is an error naming it. */
export function substituteVars(s: string, v: TaskVars, task: string): string {
    return s.replace(/\$\{([^}]*)\}/g, (_m, name: string) => {
        if (name === 'workspaceFolder' || name === 'workspaceRoot') return v.workspaceFolder;
        if (name === 'workspaceFolderBasename') return path.basename(v.workspaceFolder);
        if (name === 'userHome') return v.userHome;
        if (name === 'pathSeparator' || name === '/') return '/';
        if (name.startsWith('env:')) return v.env[name.slice(4)] ?? '';
        throw new Error('task "' + task + '" uses ${' + name + '}, which Record Command… does not fill in: ' +
            'use a path, ${workspaceFolder} or ${env:NAME}');
    });
}

/* The first character of a command line that only a shell gives a meaning to, outside
 * quotes; null when the line is plain words. */
export function shellSyntax(line: string): string | null {
    let q: string | null = null;
    for (let i = 0; i < line.length; i++) {
        const ch = line[i];
        if (q) {
            if (ch === q) q = null;
            else if (q === '"' && (ch === '$' || ch === '`')) return ch;
            else if (q === '"' && ch === '\\') i++;
        } else if (ch === "'" || ch === '"') q = ch;
        else if (ch === '\\') i++;
        else if ('|&;<>()$`*?[{}'.includes(ch)) return ch;
        else if (ch === '~' && (i === 0 || line[i - 1] === ' ' || line[i - 1] === '\t')) return ch;
    }
    return null;
}

export function taskProgram(name: string, ex: TaskExec, v: TaskVars): TaskProgram {
    const sub = (s: string) => substituteVars(s, v, name);
    let argv: string[];
    if (ex.kind === 'process') argv = [sub(ex.command), ...ex.args.map(sub)];
    else {
        const words = [ex.command, ...ex.args].map(sub);
        for (const w of ex.args.length ? words.slice(0, 1) : words) {
            const c = shellSyntax(w);
            if (c) throw new Error('task "' + name + '" needs a shell (' + c + ' in ' + w + '); kestrel records one program: ' +
                'make it a "process" task, or type the command line');
        }
        argv = ex.args.length ? [...splitCommandLine(words[0]), ...words.slice(1)] : splitCommandLine(words[0]);
    }
    if (!argv.length || !argv[0]) throw new Error('task "' + name + '" runs no program');
    const cwd = ex.cwd ? path.resolve(v.workspaceFolder, sub(ex.cwd)) : v.workspaceFolder;
    const env: Record<string, string> = {};
    for (const [k, val] of Object.entries(ex.env || {})) env[k] = sub(val);
    return { argv, cwd, env };
}
