// The core of ralph/.ralphkit.json, read one way for the installer (install/manifest.ts, which adds its records) and
// the engine's start-of-run check (verify/engine-check.ts): the version and each managed file's hash and owner.
// Pure, built-ins only (the engine bundle reads it too).

export interface ManifestFile {
  sha256: string;
  source: 'ralphkit' | 'user';
}

export interface ManifestCore {
  ralphkit: string;
  files: Record<string, ManifestFile>;
  /** The whole document, for the installer's further records. */
  data: Record<string, unknown>;
}

export function isPlainRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/** The manifest's version and files in `text`, or undefined when it is not a ralphkit manifest (an entry without a hash is left out). */
export function parseManifestCore(text: string): ManifestCore | undefined {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isPlainRecord(data) || typeof data.ralphkit !== 'string' || !isPlainRecord(data.files)) return undefined;
  const files: Record<string, ManifestFile> = {};
  for (const [path, entry] of Object.entries(data.files)) {
    if (!isPlainRecord(entry) || typeof entry.sha256 !== 'string') continue;
    files[path] = { sha256: entry.sha256, source: entry.source === 'user' ? 'user' : 'ralphkit' };
  }
  return { ralphkit: data.ralphkit, files, data };
}
