/* What a finished `kestrel run`/`record` means for the user, from its exit and its
 * stderr (the CLI's messages are `kestrel: <what>: <why>`, docs/cli.md). Pure. */

export type Outcome =
    | { kind: 'ok' }
    | { kind: 'no-compiler'; message: string }
    | { kind: 'build'; message: string; compilerOutput: string }
    | { kind: 'program'; message: string; profiled: boolean }
    | { kind: 'kestrel'; message: string };

export function classify(code: number | null, signal: string | null, stderr: string): Outcome {
    const lines = stderr.split('\n');
    const wrote = lines.some((l) => /^kestrel: wrote /.test(l));
    const failed = lines.findIndex((l) => /^kestrel: .*: compilation failed$/.test(l));
    if (failed >= 0) {
        const noCc = lines.slice(0, failed).find((l) => /^kestrel: [^:]+: No such file or directory$/.test(l));
        if (noCc)
            return { kind: 'no-compiler', message: 'no C compiler: ' + noCc.replace(/^kestrel: /, '') + ' (install clang or gcc, or set $CC)' };
        const output = lines.slice(0, failed).join('\n').trim();
        const first = lines.find((l) => /\berror\b/.test(l)) || lines[failed];
        return { kind: 'build', message: 'the program does not compile: ' + first.trim(), compilerOutput: output };
    }
    if (signal) return { kind: 'program', message: 'the program crashed (' + signal + ')', profiled: wrote };
    if (code === 0) return { kind: 'ok' };
    if (wrote) return { kind: 'program', message: 'the program exited with status ' + code, profiled: true };
    const mine = lines.filter((l) => l.startsWith('kestrel: ')).pop();
    /* kestrel re-raises the program's signal as its own exit: 128+N from a shell. */
    return { kind: 'kestrel', message: mine ? mine.replace(/^kestrel: /, '') : 'kestrel exited with status ' + code };
}
