/* Which kestrel to run, and which file on disk a path of the profile is. Pure: the
 * file system comes in as `exists`, so the unit tests give it a fake one. */
import * as path from 'path';

export type Exists = (p: string) => boolean;

/* The `kestrel.path` setting when set; else `kestrel` on PATH; else the workspace's
 * own build (build/bin/kestrel of a workspace folder), for a checkout of kestrel. */
export function resolveKestrel(setting: string, envPath: string, folders: string[], exists: Exists): { path: string } | { error: string } {
    if (setting) {
        const p = path.isAbsolute(setting) || !setting.includes('/') ? setting : path.resolve(folders[0] || '.', setting);
        if (path.isAbsolute(p)) return exists(p) ? { path: p } : { error: 'kestrel.path is ' + setting + ', which does not exist' };
        const found = onPath(p, envPath, exists);
        return found ? { path: found } : { error: 'kestrel.path is ' + setting + ', which is not on PATH' };
    }
    const found = onPath('kestrel', envPath, exists);
    if (found) return { path: found };
    for (const f of folders) {
        const p = path.join(f, 'build', 'bin', 'kestrel');
        if (exists(p)) return { path: p };
    }
    return { error: 'no kestrel: not on PATH, not in build/bin of the workspace; set kestrel.path' };
}

function onPath(name: string, envPath: string, exists: Exists): string | null {
    for (const dir of envPath.split(':')) {
        if (!dir) continue;
        const p = path.join(dir, name);
        if (exists(p)) return p;
    }
    return null;
}

/* A file the profile names, as a file to open: an absolute path that exists; else the
 * path taken from the profile's folder and each workspace folder; else a file of the
 * same name at the end of a workspace path that the caller lists (`candidates`), the
 * one with the longest matching tail. null when none is there (libc's sources). */
export function resolveSource(file: string, ctx: { profileDir?: string; folders: string[]; candidates?: string[] }, exists: Exists): string | null {
    if (!file) return null;
    if (path.isAbsolute(file)) {
        const p = path.normalize(file);
        if (exists(p)) return p;
    } else {
        for (const base of [ctx.profileDir, ...ctx.folders]) {
            if (!base) continue;
            const p = path.resolve(base, file);
            if (exists(p)) return p;
        }
    }
    const want = path.normalize(file).split('/').filter((s) => s && s !== '.' && s !== '..');
    let best: string | null = null, bestTail = 0;
    for (const c of ctx.candidates || []) {
        const have = c.split('/');
        let k = 0;
        while (k < want.length && k < have.length && want[want.length - 1 - k] === have[have.length - 1 - k]) k++;
        if (k > bestTail) { best = c; bestTail = k; }
    }
    return best;
}

/* Whether a path of the profile is the document at `docPath`. */
export function samePath(profilePath: string, docPath: string, profileDir?: string): boolean {
    if (path.isAbsolute(profilePath)) return path.normalize(profilePath) === path.normalize(docPath);
    if (profileDir && path.resolve(profileDir, profilePath) === path.normalize(docPath)) return true;
    const tail = path.normalize(profilePath).replace(/^(\.\.?\/)+/, '');
    return docPath === tail || docPath.endsWith('/' + tail);
}
