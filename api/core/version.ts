import { readFileSync } from 'node:fs';

/** The interface version of ../shared/spec/interface.md this engine serves (spec §9). */
export const INTERFACE_VERSION = '5.2.0';
export const OPENAPI_VERSION = '3.1.0';

export const ENGINE_VERSION: string = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }
).version;
