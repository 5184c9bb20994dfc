/* The extension's settings, checked, and the command lines they make. Pure. */

export interface Settings {
    path: string;
    rate: number;
    engine: string;
    unwind: string;
    heap: boolean;
    compilerFlags: string[];
}

export const ENGINES = ['auto', 'perf', 'signal'];
export const UNWINDS = ['auto', 'cfi', 'fp'];

/* `get` reads one setting (vscode's WorkspaceConfiguration.get, or a test's object).
 * A value out of range is an error naming the setting, not silently replaced. */
export function readSettings(get: (key: string) => unknown): Settings {
    const path = get('path') ?? '';
    const rate = get('rate') ?? 997;
    const engine = get('engine') ?? 'auto';
    const unwind = get('unwind') ?? 'auto';
    const heap = get('heap') ?? false;
    const flags = get('compilerFlags') ?? [];
    if (typeof path !== 'string') throw new Error('kestrel.path must be a string');
    if (typeof rate !== 'number' || !Number.isInteger(rate) || rate < 10 || rate > 10000)
        throw new Error('kestrel.rate is ' + String(rate) + ': a whole number of Hz from 10 to 10000');
    if (typeof engine !== 'string' || !ENGINES.includes(engine))
        throw new Error('kestrel.engine is ' + String(engine) + ': one of ' + ENGINES.join(', '));
    if (typeof unwind !== 'string' || !UNWINDS.includes(unwind))
        throw new Error('kestrel.unwind is ' + String(unwind) + ': one of ' + UNWINDS.join(', '));
    if (typeof heap !== 'boolean') throw new Error('kestrel.heap must be true or false');
    if (!Array.isArray(flags) || flags.some((f) => typeof f !== 'string'))
        throw new Error('kestrel.compilerFlags must be a list of strings');
    return { path, rate, engine, unwind, heap, compilerFlags: flags as string[] };
}

function recordOptions(s: Settings, stem: string): string[] {
    const a = ['-F', String(s.rate), '--engine', s.engine, '--unwind', s.unwind];
    if (s.heap) a.push('--heap');
    a.push('-o', stem);
    return a;
}

/* The languages `kestrel run` compiles that Profile Current File offers, by file name
 * (kestrel run's own rule, docs/cli.md), with the variable its compiler flags go in. */
export function sourceLanguage(file: string): { lang: 'c' | 'cpp'; flagsVar: string } | null {
    if (/\.c$/.test(file)) return { lang: 'c', flagsVar: 'CFLAGS' };
    if (/\.(cc|cpp|cxx|C)$/.test(file)) return { lang: 'cpp', flagsVar: 'CXXFLAGS' };
    return null;
}

/* `kestrel run` of one C or C++ file; the compiler flags travel in $CFLAGS or
 * $CXXFLAGS (docs/cli.md). */
export function runCommand(s: Settings, file: string, stem: string): { args: string[]; env: Record<string, string> } {
    const lang = sourceLanguage(file);
    if (!lang) throw new Error(file + ' is not a C or C++ file (.c, .cc, .cpp, .cxx, .C): kestrel run would not compile it');
    const env: Record<string, string> = {};
    if (s.compilerFlags.length) env[lang.flagsVar] = s.compilerFlags.join(' ');
    return { args: ['run', ...recordOptions(s, stem), file], env };
}

export function recordCommand(s: Settings, argv: string[], stem: string): { args: string[]; env: Record<string, string> } {
    if (!argv.length) throw new Error('no program to record');
    return { args: ['record', ...recordOptions(s, stem), '--', ...argv], env: {} };
}

/* A typed command line into words: spaces separate, '...' and "..." quote, \ escapes
 * outside single quotes. No expansion: the program runs without a shell. */
export function splitCommandLine(line: string): string[] {
    const out: string[] = [];
    let cur = '', inWord = false, q: string | null = null;
    for (let i = 0; i < line.length; i++) {
        const ch = line[i];
        if (q) {
            if (ch === q) q = null;
            else if (ch === '\\' && q === '"' && i + 1 < line.length && '"\\$`'.includes(line[i + 1])) cur += line[++i];
            else cur += ch;
        } else if (ch === "'" || ch === '"') { q = ch; inWord = true; }
        else if (ch === '\\' && i + 1 < line.length) { cur += line[++i]; inWord = true; }
        else if (ch === ' ' || ch === '\t') { if (inWord) out.push(cur); cur = ''; inWord = false; }
        else { cur += ch; inWord = true; }
    }
    if (q) throw new Error('unclosed ' + q + ' in the command line');
    if (inWord) out.push(cur);
    return out;
}

/* The program's base name, for the exports' stem. */
export function stemName(file: string): string {
    const base = file.split('/').pop() || 'program';
    return base.replace(/\.(c|cc|cpp|cxx|C)$/, '') || 'program';
}

/* The name Open Profile… gives a profile file (its panel's title, its exports' stem):
 * the file's name without the suffix; a raw file of a run's STEM.raw/ folder
 * (PID.raw.json, PID.heap.pb.gz) is named after the run, STEM.PID or STEM.PID.heap. */
export function profileName(file: string): string {
    const parts = file.split('/');
    const base = parts.pop() || '', dir = parts.pop() || '';
    const m = /^(\d+)\.(raw\.json|heap\.pb\.gz)$/.exec(base);
    if (m && dir.length > 4 && dir.endsWith('.raw')) return dir.slice(0, -4) + '.' + m[1] + (m[2] === 'heap.pb.gz' ? '.heap' : '');
    return base.replace(/(\.raw\.json|\.json|\.pb\.gz|\.pb)$/, '') || 'profile';
}
