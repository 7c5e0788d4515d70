// Module hooks: every relative import made by a file of the SillyTavern
// checkout (world-info.js) is answered by a generated module whose named
// exports come from the stand-ins the harness installs on globalThis
// (stubs.mjs). SillyTavern's file itself is loaded byte for byte.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

let publicUrl = '';
let importedNames = new Map();

/** Receives the checkout's `public/` URL and the scanned file's URL. */
export async function initialize(data) {
    publicUrl = data.publicUrl;
    importedNames = namesImportedBy(data.worldInfoUrl);
}

/** Maps module path relative to `public/` -> the names the file imports from it. */
function namesImportedBy(fileUrl) {
    const text = readFileSync(fileURLToPath(fileUrl), 'utf8');
    const names = new Map();
    const re = /^import\s*\{([^}]*)\}\s*from\s*'([^']+)';/gm;
    for (const m of text.matchAll(re)) {
        const rel = new URL(m[2], fileUrl).href.slice(publicUrl.length);
        const list = m[1].split(',').map((s) => s.trim()).filter(Boolean).map((s) => s.split(/\s+as\s+/)[0].trim());
        names.set(rel, [...(names.get(rel) ?? []), ...list]);
    }
    return names;
}

export async function resolve(specifier, context, next) {
    const parent = context.parentURL ?? '';
    if (publicUrl && parent.startsWith(publicUrl) && (specifier.startsWith('./') || specifier.startsWith('../'))) {
        const rel = new URL(specifier, parent).href.slice(publicUrl.length);
        return { url: `st-stub:${rel}`, shortCircuit: true };
    }
    return next(specifier, context);
}

export async function load(url, context, next) {
    if (!url.startsWith('st-stub:')) {
        return next(url, context);
    }
    const rel = url.slice('st-stub:'.length);
    const names = importedNames.get(rel);
    if (!names) {
        throw new Error(`st-oracle: unexpected import of ${rel}`);
    }
    const lines = [`const m = globalThis.__stOracle.module(${JSON.stringify(rel)});`];
    for (const name of names) {
        lines.push(`export const ${name} = m(${JSON.stringify(name)});`);
    }
    return { format: 'module', source: lines.join('\n'), shortCircuit: true };
}
