import packageJson from '../package.json' with { type: 'json' };

/** The interface version of ../shared/spec/interface.md this engine serves (spec §9). */
export const INTERFACE_VERSION = '5.2.0';
export const OPENAPI_VERSION = '3.1.0';

/** package.json's version, bundled at import time (no disk read at run time in the core). */
export const ENGINE_VERSION: string = packageJson.version;
