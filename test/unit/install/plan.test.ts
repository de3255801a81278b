import { describe, expect, it } from 'vitest';
import { planFile, planInstall, planIsNoop, renderManifest, type PlannedFile } from '../../../src/install/plan.js';
import { hashContent } from '../../../src/util/hash.js';
import { renameTemplate } from '../../../src/install/sources.js';
import { parseManifest } from '../../../src/install/manifest.js';
import type { Manifest } from '../../../src/install/types.js';

const B = 'hash-installed';
const N = 'hash-new';
const D = 'hash-edited';
const managed = (sha256: string): PlannedFile => ({
  path: 'ralph/ralph.sh',
  class: 'managed',
  source: 'ralphkit',
  sha256,
});
const state = (sha256: string): PlannedFile => ({ path: 'ralph/prd.json', class: 'state', source: 'ralphkit', sha256 });
const opts = { backupDir: 'ralph/.backup/T', version: '1.0.0' };

describe('planFile: the decision table of SPEC §2', () => {
  it.each([
    // row                                   file          disk       baseline   force  action        backup
    ['missing', managed(N), undefined, undefined, false, 'create', false],
    ['missing, --force', managed(N), undefined, B, true, 'create', false],
    ['D = N', managed(N), N, B, false, 'identical', false],
    ['D = N, --force', managed(N), N, B, true, 'identical', false],
    ['D = N, no manifest entry', managed(N), N, undefined, false, 'identical', false],
    ['pristine older version', managed(N), B, B, false, 'upgrade', false],
    ['pristine older version, --force', managed(N), B, B, true, 'upgrade', false],
    ['edited, nothing new', managed(B), D, B, false, 'keep', false],
    ['edited, nothing new, --force', managed(B), D, B, true, 'overwrite', true],
    ['edited and new version', managed(N), D, B, false, 'conflict', false],
    ['edited and new version, --force', managed(N), D, B, true, 'overwrite', true],
    ['no manifest entry, D ≠ N', managed(N), D, undefined, false, 'conflict', false],
    ['no manifest entry, D ≠ N, --force', managed(N), D, undefined, true, 'overwrite', true],
    ['state missing', state(N), undefined, undefined, false, 'create', false],
    ['state present and edited', state(N), D, undefined, false, 'skip-state', false],
    ['state present and edited, --force', state(N), D, undefined, true, 'skip-state', false],
    ['state present, equal', state(N), N, undefined, true, 'skip-state', false],
  ] as const)('%s → %s', (_row, file, disk, baseline, force, action, backedUp) => {
    const item = planFile(file, disk, baseline, { ...opts, force });
    expect(item.action).toBe(action);
    expect(item.backup).toBe(backedUp ? `ralph/.backup/T/${file.path}` : undefined);
  });

  it.each([
    ['overwrite', 'overwrite'],
    ['keep', 'keep'],
  ] as const)('a conflict answered "%s" at the prompt becomes %s', (answer, action) => {
    const item = planFile(managed(N), D, B, { ...opts, resolutions: new Map([['ralph/ralph.sh', answer]]) });
    expect(item.action).toBe(action);
  });
});

describe('planFile: a merged file (.claude/settings.json)', () => {
  const merged = (sha256: string, over: Partial<PlannedFile> = {}): PlannedFile => ({
    path: '.claude/settings.json',
    class: 'merged',
    source: 'ralphkit',
    sha256,
    ...over,
  });
  it.each([
    // row                              file                                             disk       action       reason
    ['to take out, not there', merged(N, { remove: true, reason: 'hook out' }), undefined, 'identical', 'not there'],
    ['to take out', merged(N, { remove: true, reason: 'hook out' }), D, 'remove', 'hook out'],
    ['to take out, no reason given', merged(N, { remove: true }), D, 'remove', 'removed'],
    ['up to date', merged(N, { reason: 'hook in' }), N, 'identical', 'up to date'],
    ['new', merged(N, { reason: 'hook in' }), undefined, 'create', 'hook in'],
    ['new, no reason given', merged(N), undefined, 'create', 'new'],
    ["merged into the user's", merged(N, { reason: 'hook in' }), D, 'merge', 'hook in'],
    ['merged, no reason given', merged(N), D, 'merge', 'merged'],
  ] as const)('%s → %s', (_row, file, disk, action, reason) => {
    const item = planFile(file, disk, B, { ...opts, force: true });
    expect([item.action, item.reason, item.backup]).toEqual([action, reason, undefined]);
  });
});

describe('planFile: a managed file taken out (install --no-ci)', () => {
  const removed = (sha256: string, reason?: string): PlannedFile => ({
    ...managed(sha256),
    remove: true,
    ...(reason ? { reason } : {}),
  });
  it.each([
    // row                                 disk       baseline   force  answer       action       backup  reason
    ['not there', undefined, B, false, undefined, 'identical', false, 'not there'],
    ['as installed', B, B, false, undefined, 'remove', false, 'taken out'],
    ['as ralphkit ships it now', N, B, false, undefined, 'remove', false, 'taken out'],
    ['edited', D, B, false, undefined, 'conflict', false, 'edited since installed: removing it would lose your edits'],
    [
      'edited, --force',
      D,
      B,
      true,
      undefined,
      'remove',
      true,
      'edited since installed; yours is backed up to ralph/.backup/T/ralph/ralph.sh, then removed',
    ],
    [
      'edited, "overwrite" at the prompt',
      D,
      B,
      false,
      'overwrite',
      'remove',
      true,
      'edited since installed; yours is backed up to ralph/.backup/T/ralph/ralph.sh, then removed',
    ],
    [
      'edited, "keep" at the prompt',
      D,
      B,
      false,
      'keep',
      'keep',
      false,
      'edited since installed; kept at your request, and ralphkit no longer manages it',
    ],
  ] as const)('%s → %s', (_row, disk, baseline, force, answer, action, backedUp, reason) => {
    const resolutions = answer ? new Map([['ralph/ralph.sh', answer]]) : undefined;
    const item = planFile(removed(N, 'taken out'), disk, baseline, { ...opts, force, resolutions });
    expect([item.action, item.removing, item.reason]).toEqual([action, true, reason]);
    expect(item.backup).toBe(backedUp ? 'ralph/.backup/T/ralph/ralph.sh' : undefined);
    expect(item.keptBecause).toBe(action === 'keep' ? 'chosen' : undefined);
  });

  it('without a reason of its own, a removal says "removed"', () => {
    expect(planFile(removed(N), B, B, opts).reason).toBe('removed');
  });

  it('the manifest forgets the file and the CI record; a plain plan keeps both', () => {
    const manifest: Manifest = {
      ralphkit: '1.0.0',
      files: { 'ralph/ralph.sh': { sha256: B, source: 'ralphkit' } },
      ci: 'github',
    };
    const gone = planInstall(manifest, new Map([['ralph/ralph.sh', B]]), [removed(N)], { ...opts, ci: null });
    expect(gone.manifest.next).toEqual({ ralphkit: '1.0.0', files: {} });
    const kept = planInstall(manifest, new Map([['ralph/ralph.sh', B]]), [managed(B)], opts);
    expect(kept.manifest.next).toEqual(manifest);
    expect(parseManifest(renderManifest(kept.manifest.next))).toEqual(manifest);
  });

  it('records the CI workflow when asked, and drops the record with null', () => {
    expect(planInstall(undefined, new Map(), [], { ...opts, ci: 'github' }).manifest.next.ci).toBe('github');
    expect(
      planInstall({ ralphkit: '1', files: {}, ci: 'github' }, new Map(), [], { ...opts, ci: null }).manifest.next.ci,
    ).toBeUndefined();
  });

  it('records the skill folders an install wrote, keeps them when none are given, and reads back only known names', () => {
    const manifest: Manifest = { ralphkit: '1.0.0', files: {}, agents: ['agents'] };
    expect(planInstall(manifest, new Map(), [], opts).manifest.next.agents).toEqual(['agents']);
    expect(
      planInstall(manifest, new Map(), [], { ...opts, agents: ['claude', 'agents'] }).manifest.next.agents,
    ).toEqual(['claude', 'agents']);
    expect(parseManifest(renderManifest({ ...manifest, agents: ['claude', 'agents'] }))?.agents).toEqual([
      'claude',
      'agents',
    ]);
    expect(
      parseManifest(JSON.stringify({ ralphkit: '1', files: {}, agents: ['claude', '../x'] }))?.agents,
    ).toBeUndefined();
  });
});

describe('planInstall', () => {
  const manifest = (files: Manifest['files'], version = '1.0.0'): Manifest => ({ ralphkit: version, files });

  it('treats a manifest entry from another source as no baseline (a user skill where ralphkit ships one)', () => {
    const file: PlannedFile = { path: '.claude/skills/prd/SKILL.md', class: 'managed', source: 'ralphkit', sha256: N };
    const m = manifest({ [file.path]: { sha256: B, source: 'user' } });
    const plan = planInstall(m, new Map([[file.path, B]]), [file], opts);
    expect(plan.items[0].action).toBe('conflict');
  });

  it('records new hashes for written and identical files, keeps the baseline of kept ones, and carries other entries over', () => {
    const files: PlannedFile[] = [
      { path: 'a', class: 'managed', source: 'ralphkit', sha256: 'a2' },
      { path: 'b', class: 'managed', source: 'ralphkit', sha256: 'b1' },
      { path: 'c', class: 'managed', source: 'ralphkit', sha256: 'c1' },
      { path: 'p', class: 'state', source: 'ralphkit', sha256: 'p1' },
    ];
    const m = manifest(
      {
        a: { sha256: 'a1', source: 'ralphkit' },
        b: { sha256: 'b1', source: 'ralphkit' },
        other: { sha256: 'o', source: 'user' },
      },
      '0.9.0',
    );
    const disk = new Map([
      ['a', 'a1'],
      ['b', 'b-edited'],
      ['c', undefined],
      ['p', 'p-edited'],
    ]);
    const plan = planInstall(m, disk, files, opts);
    expect(plan.items.map((i) => i.action)).toEqual(['upgrade', 'keep', 'create', 'skip-state']);
    expect(plan.manifest.action).toBe('update');
    expect(plan.manifest.next).toEqual({
      ralphkit: '1.0.0',
      files: {
        a: { sha256: 'a2', source: 'ralphkit' },
        b: { sha256: 'b1', source: 'ralphkit' },
        c: { sha256: 'c1', source: 'ralphkit' },
        other: { sha256: 'o', source: 'user' },
      },
    });
  });

  it.each([
    ['no manifest yet', undefined, 'create', false],
    ['same version and hashes', manifest({ 'ralph/ralph.sh': { sha256: N, source: 'ralphkit' } }), 'identical', true],
    [
      'older version recorded',
      manifest({ 'ralph/ralph.sh': { sha256: N, source: 'ralphkit' } }, '0.1.0'),
      'update',
      false,
    ],
  ] as const)('manifest: %s → %s', (_name, m, action, noop) => {
    const plan = planInstall(m, new Map([['ralph/ralph.sh', N]]), [managed(N)], opts);
    expect(plan.manifest.action).toBe(action);
    expect(planIsNoop(plan)).toBe(noop);
  });

  it('renders a manifest that parses back to itself', () => {
    const m = manifest({ 'ralph/ralph.sh': { sha256: N, source: 'ralphkit' }, x: { sha256: B, source: 'user' } });
    expect(parseManifest(renderManifest(m))).toEqual(m);
  });
});

describe('helpers', () => {
  it.each([
    ['a\r\nb\r\n', 'a\nb\n', true],
    ['a\nb\n', 'a\nb', false],
    ['a\rb', 'a\nb', false],
  ])('hashContent(%j) equals hashContent(%j): %s', (x, y, same) => {
    expect(hashContent(Buffer.from(x)) === hashContent(Buffer.from(y))).toBe(same);
  });

  it.each([
    ['_gitignore', '.gitignore'],
    ['sub/_gitignore', 'sub/.gitignore'],
    ['ralph.sh', 'ralph.sh'],
    ['my_gitignore', 'my_gitignore'],
  ])('renameTemplate(%s) → %s', (from, to) => {
    expect(renameTemplate(from)).toBe(to);
  });

  it.each([
    ['not json', undefined],
    ['{"files":{}}', undefined],
    [
      '{"ralphkit":"1","files":{"a":{"sha256":"x"}}}',
      { ralphkit: '1', files: { a: { sha256: 'x', source: 'ralphkit' } } },
    ],
    [
      '{"ralphkit":"1","files":{"a":3,"b":{"sha256":"y","source":"user"}}}',
      { ralphkit: '1', files: { b: { sha256: 'y', source: 'user' } } },
    ],
  ])('parseManifest(%s)', (text, expected) => {
    expect(parseManifest(text)).toEqual(expected);
  });
});
