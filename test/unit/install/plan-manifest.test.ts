// What the planner records in the manifest decides the next upgrade: a hash recorded for a file the user
// kept makes a later upgrade overwrite their edit silently; a hash not recorded for a file now up to date
// makes a later upgrade report a false conflict. These tests pin both, action by action.
import { describe, expect, it } from 'vitest';
import {
  conflictsOf,
  planFile,
  planInstall,
  planIsNoop,
  renderManifest,
  type PlanOptions,
  type PlannedFile,
} from '../../../src/install/plan.js';
import type { Manifest, Resolution } from '../../../src/install/types.js';
import { parseManifest } from '../../../src/install/manifest.js';

const opts: PlanOptions = { backupDir: 'ralph/.backup/T', version: '2.0.0' };
const file = (sha256: string, path = 'ralph/ralph.sh'): PlannedFile => ({
  path,
  class: 'managed',
  source: 'ralphkit',
  sha256,
});
const manifestOf = (sha256: string | undefined, version = '1.0.0'): Manifest => ({
  ralphkit: version,
  files: sha256 === undefined ? {} : { 'ralph/ralph.sh': { sha256, source: 'ralphkit' } },
});
const disk = (sha256: string | undefined) => new Map([['ralph/ralph.sh', sha256]]);
const recorded = (m: Manifest) => m.files['ralph/ralph.sh']?.sha256;

describe('planInstall: the hash each action records', () => {
  it.each([
    // action        baseline disk       new  extra options                                          recorded
    ['create', 'B', undefined, 'N', {}, 'N'],
    ['identical', 'B', 'N', 'N', {}, 'N'],
    ['fix-mode', 'B', 'N', 'N', { notExecutable: new Set(['ralph/ralph.sh']) }, 'N'],
    ['upgrade', 'B', 'B', 'N', {}, 'N'],
    ['overwrite', 'B', 'D', 'N', { force: true }, 'N'],
    ['overwrite', 'B', 'D', 'N', { resolutions: new Map<string, Resolution>([['ralph/ralph.sh', 'overwrite']]) }, 'N'],
    ['keep', 'B', 'D', 'B', {}, 'B'],
    ['keep', 'B', 'D', 'N', { resolutions: new Map<string, Resolution>([['ralph/ralph.sh', 'keep']]) }, 'B'],
    ['conflict', 'B', 'D', 'N', {}, 'B'],
    ['conflict', undefined, 'D', 'N', {}, undefined],
  ] as const)('%s (baseline %s, disk %s, new %s) records %#', (action, baseline, onDisk, sha, extra, hash) => {
    const plan = planInstall(manifestOf(baseline), disk(onDisk), [file(sha)], { ...opts, ...extra });
    expect(plan.items[0].action).toBe(action);
    expect(recorded(plan.manifest.next)).toBe(hash);
  });

  it('records nothing for a state file, created or skipped', () => {
    const state: PlannedFile = { path: 'ralph/prd.json', class: 'state', source: 'ralphkit', sha256: 'S' };
    for (const onDisk of [undefined, 'S', 'edited']) {
      const plan = planInstall(manifestOf(undefined), new Map([['ralph/prd.json', onDisk]]), [state], opts);
      expect(plan.manifest.next.files).toEqual({});
    }
  });

  it('records the source of the file it plans', () => {
    const skill: PlannedFile = { path: '.claude/skills/x/SKILL.md', class: 'managed', source: 'user', sha256: 'U' };
    const plan = planInstall(undefined, new Map([[skill.path, undefined]]), [skill], opts);
    expect(plan.manifest.next.files).toEqual({ [skill.path]: { sha256: 'U', source: 'user' } });
  });
});

describe('planInstall: a second upgrade after the first', () => {
  // Install v1 (hash B), then the situation of the first row, then ralphkit v3 ships hash V3.
  const upgradeTwice = (onDisk: string, first: string, extra: Partial<PlanOptions>) => {
    const one = planInstall(manifestOf('B'), disk(onDisk), [file(first)], { ...opts, ...extra });
    const two = planInstall(one.manifest.next, disk(onDisk), [file('V3')], { ...opts, version: '3.0.0' });
    return [one.items[0].action, two.items[0].action];
  };

  it('a file the user already brought up to date upgrades quietly next time (no false conflict)', () => {
    expect(upgradeTwice('N', 'N', {})).toEqual(['identical', 'upgrade']);
  });

  it('a file whose mode was fixed upgrades quietly next time', () => {
    expect(upgradeTwice('N', 'N', { notExecutable: new Set(['ralph/ralph.sh']) })).toEqual(['fix-mode', 'upgrade']);
  });

  it('an edit the user kept is still reported next time, never overwritten silently', () => {
    expect(upgradeTwice('D', 'N', { resolutions: new Map([['ralph/ralph.sh', 'keep']]) })).toEqual([
      'keep',
      'conflict',
    ]);
    expect(upgradeTwice('D', 'B', {})).toEqual(['keep', 'conflict']);
  });
});

describe('planInstall: the manifest itself', () => {
  it('is identical only when version and every hash are unchanged', () => {
    expect(planInstall(manifestOf('N', '2.0.0'), disk('N'), [file('N')], opts).manifest.action).toBe('identical');
    expect(planInstall(manifestOf('B', '2.0.0'), disk('N'), [file('N')], opts).manifest.action).toBe('update');
    expect(planInstall(undefined, disk('N'), [file('N')], opts).manifest).toMatchObject({
      path: 'ralph/.ralphkit.json',
      action: 'create',
    });
  });

  it('keeps the recorded version when asked (skill add), and records this one on a first manifest', () => {
    const keep = { ...opts, keepRecordedVersion: true };
    expect(planInstall(manifestOf('N'), disk('N'), [file('N')], keep).manifest.next.ralphkit).toBe('1.0.0');
    expect(planInstall(undefined, disk('N'), [file('N')], keep).manifest.next.ralphkit).toBe('2.0.0');
    expect(planInstall(manifestOf('N'), disk('N'), [file('N')], opts).manifest.next.ralphkit).toBe('2.0.0');
  });

  it('lists its entries sorted by path, whatever order the files came in', () => {
    const files = ['c', 'a', 'b'].map((p) => file(p, p));
    const plan = planInstall(undefined, new Map(), files, opts);
    expect(Object.keys(plan.manifest.next.files)).toEqual(['a', 'b', 'c']);
  });

  it('renders only the version and the files, two-space indented, with a final newline', () => {
    const m = { ...manifestOf('N'), extra: 'x' } as Manifest;
    expect(renderManifest(m)).toBe(
      '{\n  "ralphkit": "1.0.0",\n  "files": {\n    "ralph/ralph.sh": {\n      "sha256": "N",\n      "source": "ralphkit"\n    }\n  }\n}\n',
    );
  });
});

describe('planFile: reasons and precedence', () => {
  const state: PlannedFile = { path: 'ralph/prd.json', class: 'state', source: 'ralphkit', sha256: 'N' };
  it.each([
    ['new', file('N'), undefined, 'B', {}],
    ['new (state: yours from now on)', state, undefined, undefined, {}],
    ['state file: yours, never touched', state, 'D', undefined, {}],
    ['up to date', file('N'), 'N', 'B', {}],
    [
      'up to date, but not executable: made executable again',
      file('N'),
      'N',
      'B',
      { notExecutable: new Set(['ralph/ralph.sh']) },
    ],
    ['unchanged since installed; new version', file('N'), 'B', 'B', {}],
    [
      'edited since installed; yours is backed up to ralph/.backup/T/ralph/ralph.sh',
      file('N'),
      'D',
      'B',
      { force: true },
    ],
    [
      'not installed by ralphkit; yours is backed up to ralph/.backup/T/ralph/ralph.sh',
      file('N'),
      'D',
      undefined,
      { force: true },
    ],
    ['edited since installed; nothing new from ralphkit, so your file stays', file('B'), 'D', 'B', {}],
    [
      'edited since installed; kept at your request',
      file('N'),
      'D',
      'B',
      { resolutions: new Map([['ralph/ralph.sh', 'keep']]) },
    ],
    ['edited since installed, and ralphkit ships a new version', file('N'), 'D', 'B', {}],
    ["not installed by ralphkit, and differs from ralphkit's version", file('N'), 'D', undefined, {}],
  ] as const)('%s', (reason, f, onDisk, baseline, extra) => {
    expect(planFile(f, onDisk, baseline, { ...opts, ...extra } as PlanOptions).reason).toBe(reason);
  });

  it('says why a file was kept', () => {
    expect(planFile(file('B'), 'D', 'B', opts).keptBecause).toBe('nothing-newer');
    expect(
      planFile(file('N'), 'D', 'B', { ...opts, resolutions: new Map([['ralph/ralph.sh', 'keep']]) }).keptBecause,
    ).toBe('chosen');
  });

  it('lets --force win over an answer to keep, and an answer for another path change nothing', () => {
    expect(
      planFile(file('N'), 'D', 'B', { ...opts, force: true, resolutions: new Map([['ralph/ralph.sh', 'keep']]) })
        .action,
    ).toBe('overwrite');
    expect(planFile(file('N'), 'D', 'B', { ...opts, resolutions: new Map([['other', 'overwrite']]) }).action).toBe(
      'conflict',
    );
  });

  it('fixes the mode only of a file that is up to date and listed', () => {
    expect(planFile(file('N'), 'N', 'B', { ...opts, notExecutable: new Set(['other']) }).action).toBe('identical');
    expect(planFile(file('N'), 'B', 'B', { ...opts, notExecutable: new Set(['ralph/ralph.sh']) }).action).toBe(
      'upgrade',
    );
  });
});

describe('planIsNoop and conflictsOf', () => {
  const plan = (action: 'identical' | 'update', ...actions: string[]) => ({
    items: actions.map((a, i) => ({ path: `f${i}`, class: 'managed' as const, action: a as never, reason: '' })),
    manifest: { path: 'ralph/.ralphkit.json', action, next: manifestOf(undefined) },
  });

  it.each([
    [['identical', 'keep', 'skip-state'], 'identical', true],
    [['identical', 'keep', 'skip-state'], 'update', false],
    [['identical', 'fix-mode'], 'identical', false],
    [['create'], 'identical', false],
    [['upgrade'], 'identical', false],
    [['overwrite'], 'identical', false],
    [['conflict'], 'identical', false],
  ] as const)('%j with the manifest %s: noop %s', (actions, manifestAction, noop) => {
    expect(planIsNoop(plan(manifestAction, ...actions))).toBe(noop);
  });

  it('lists only the conflicts', () => {
    expect(conflictsOf(plan('update', 'keep', 'conflict', 'create', 'conflict')).map((i) => i.path)).toEqual([
      'f1',
      'f3',
    ]);
  });
});

describe('the Stop hook record in the manifest', () => {
  const hooked: Manifest = { ...manifestOf('B'), claudeHook: { added: 'hooks', gap: ' ' } };

  it.each([
    ['carries the record over when nothing is asked of it', undefined, { added: 'hooks', gap: ' ' }],
    ['replaces it', { added: 'entry' } as const, { added: 'entry' }],
    ['drops it', null, undefined],
  ])('%s', (_name, claudeHook, expected) => {
    const plan = planInstall(hooked, disk('B'), [file('B')], { ...opts, version: '1.0.0', claudeHook });
    expect(plan.manifest.next.claudeHook).toEqual(expected);
    expect(plan.manifest.action).toBe(claudeHook === undefined ? 'identical' : 'update');
  });

  it('round-trips through the manifest file, and a gap that is not whitespace is never taken from it', () => {
    expect(parseManifest(renderManifest(hooked))).toEqual(hooked);
    const tampered = renderManifest({ ...hooked, claudeHook: { added: 'hooks', gap: '"evil": 1' } });
    expect(parseManifest(tampered)?.claudeHook).toEqual({ added: 'hooks' });
    expect(
      parseManifest(renderManifest({ ...hooked, claudeHook: { added: 'nonsense' as 'file' } }))?.claudeHook,
    ).toBeUndefined();
  });
});
