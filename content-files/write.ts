import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export function writeFile(file: string, data: string | Uint8Array): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, data);
}

export function writeJson(file: string, value: unknown): void {
  writeFile(file, `${JSON.stringify(value)}\n`);
}
