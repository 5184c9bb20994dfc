// Copies the viewer (web/viewer.html, its stylesheet and scripts) into media/web, the
// files the extension's webview loads: the viewer's code stays in web/, one copy.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const web = join(here, '..', '..', '..', 'web');
const to = join(here, '..', 'media', 'web');
rmSync(to, { recursive: true, force: true });
mkdirSync(to, { recursive: true });
const files = readdirSync(web).filter((f) => f === 'viewer.html' || /\.(js|css)$/.test(f));
if (!files.includes('viewer.html')) throw new Error(web + ': no viewer.html');
for (const f of files) copyFileSync(join(web, f), join(to, f));
