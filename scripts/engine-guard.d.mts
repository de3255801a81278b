// Types for engine-guard.mjs (the build script stays plain JavaScript; tests import it from TypeScript).
import type { Metafile } from 'esbuild';

export declare const ENGINE_SOURCE_DIRS: string[];
export interface GuardOptions {
  allowedDirs?: string[];
  entryPoints?: string[];
}
export declare function foreignInputs(
  metafile: Metafile,
  options?: GuardOptions,
): { input: string; importers: string[] }[];
export declare function foreignExternals(metafile: Metafile): string[];
export declare function engineGuardMessage(metafile: Metafile, options?: GuardOptions): string | undefined;
