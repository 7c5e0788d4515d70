// Registers hooks.mjs for the checkout named by ST_ORACLE_PUBLIC (its
// `public/` directory). Used as `node --import ./register.mjs run-case.mjs`.
import { register } from 'node:module';
import { pathToFileURL } from 'node:url';
import path from 'node:path';

const publicDir = process.env.ST_ORACLE_PUBLIC;
if (!publicDir) {
    throw new Error('st-oracle: ST_ORACLE_PUBLIC (a SillyTavern checkout\'s public/ directory) is not set');
}
const publicUrl = pathToFileURL(path.resolve(publicDir)).href + '/';
const worldInfoUrl = new URL('scripts/world-info.js', publicUrl).href;
register('./hooks.mjs', import.meta.url, { data: { publicUrl, worldInfoUrl } });
