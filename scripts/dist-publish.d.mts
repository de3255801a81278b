// Types for dist-publish.mjs (the build scripts stay plain JavaScript; tests import them from TypeScript).
export declare const CHUNK_PREFIX: string;
export declare function publish(from: string, to: string, chunks: string[]): Promise<void>;
