// Spawns the built CLI (run `npm run build` first; `npm test` does) in temp git repositories.
import { describe, expect, it } from 'vitest';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { ROOT, cliAsTyped, git, gitdir, run, runCli, testdir, writeFiles } from '../support/repo.js';
import { ageInstall, snapshotTree } from '../support/fake-package.js';
import { plan, story } from '../support/plan.js';

const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

/** What install should write, derived from the package's own templates/ and skills/ listings. */
function expectedFiles(skillDirs = ['.claude/skills']): string[] {
  const walk = (dir: string, rel = ''): string[] =>
    readdirSync(path.join(dir, rel), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? walk(dir, `${rel}${e.name}/`) : [`${rel}${e.name}`],
    );
  const templates = walk(path.join(ROOT, 'templates/ralph')).map(
    (f) => `ralph/${f.replace(/(^|\/)_gitignore$/, '$1.gitignore')}`,
  );
  const skills = readdirSync(path.join(ROOT, 'skills')).filter((f) => f.endsWith('.md'));
  const skillFiles = skillDirs.flatMap((dir) => skills.map((f) => `${dir}/${f.replace(/\.md$/, '')}/SKILL.md`));
  return [...templates, 'ralph/ralph.mjs', 'ralph/.ralphkit.json', ...skillFiles].sort();
}

function installedFiles(repo: string): string[] {
  return Object.keys(snapshotTree(repo))
    .filter((p) => !p.endsWith('/') && !p.startsWith('.git/') && p !== 'README.md')
    .sort();
}

describe('ralphkit install (built CLI)', () => {
  it('installs exactly the template listing, then has nothing to do', async () => {
    const repo = gitdir();
    const first = await runCli(['install'], { cwd: repo });
    expect(first.code).toBe(0);
    expect(strip(first.stdout)).toContain(`Installed into ${repo}`);
    expect(installedFiles(repo)).toEqual(expectedFiles());
    expect(statSync(path.join(repo, 'ralph/ralph.sh')).mode & 0o777).toBe(0o755);
    expect(readFileSync(path.join(repo, 'ralph/ralph.mjs'))).toEqual(readFileSync(path.join(ROOT, 'dist/ralph.mjs')));
    expect(readFileSync(path.join(repo, 'ralph/.gitignore'), 'utf8')).toMatch(/^\.runs\/$/m);

    const second = await runCli(['install'], { cwd: repo });
    expect(second.code).toBe(0);
    expect(strip(second.stdout)).toMatch(/^Nothing to do: .* is up to date with ralphkit \d/);
  });

  it('the Done line counts every row of the table, the manifest row included', async () => {
    const repo = gitdir();
    const out = strip((await runCli(['install'], { cwd: repo })).stdout);
    const rows = out.split('\n').filter((l) => /^  \S/.test(l) && !/^  \d\./.test(l));
    expect(rows).toHaveLength(expectedFiles().length);
    expect(out).toContain(`Done: ${expectedFiles().length} create.`);

    ageInstall(repo, { 'ralph/ralph.sh': '#!/bin/sh\n# an older runner\n' });
    const upgrade = strip((await runCli(['install'], { cwd: repo })).stdout);
    // 9 files and the manifest: 1 + 4 + 4 + 1 rows, each counted once.
    expect(upgrade).toContain('Done: 1 upgrade, 4 identical, 4 skip-state, 1 update.');
    expect(upgrade).toMatch(/^  update +ralph\/\.ralphkit\.json /m);
  });

  it('an edited file with nothing newer from ralphkit: the summary on stdout says it was kept', async () => {
    const repo = gitdir();
    await runCli(['install'], { cwd: repo });
    writeFileSync(path.join(repo, 'ralph/ralph.sh'), '#!/bin/sh\n# my own tweak\n');
    const again = await runCli(['install'], { cwd: repo });
    expect(again.code).toBe(0);
    expect(strip(again.stdout)).toBe(
      `Kept your edited ralph/ralph.sh (ralphkit has nothing newer for it). The loop refuses to start with a modified engine: \`${cliAsTyped()} install --force\` puts ralphkit's back, or run the loop with --allow-modified-engine.\nNothing else to do: ${repo} is up to date with ralphkit ${JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')).version}.\n`,
    );
    expect(readFileSync(path.join(repo, 'ralph/ralph.sh'), 'utf8')).toBe('#!/bin/sh\n# my own tweak\n');
  });

  it('--cwd, --agent claude,agents and --json: one JSON document listing every file', async () => {
    const repo = gitdir();
    const result = await runCli(['install', '--cwd', repo, '--agent', 'claude,agents', '--json'], { cwd: testdir() });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc).toMatchObject({ command: 'install', status: 'written', exitCode: 0, cwd: repo, backups: [] });
    const listed = [...doc.files.map((f: { path: string }) => f.path), doc.manifest.path].sort();
    expect(listed).toEqual(expectedFiles(['.claude/skills', '.agents/skills']));
    expect(installedFiles(repo)).toEqual(listed);
  });

  it('--no-skills installs ralph/ only; --dry-run writes nothing', async () => {
    const repo = gitdir();
    const dry = await runCli(['install', '--dry-run'], { cwd: repo });
    expect(dry.code).toBe(0);
    expect(strip(dry.stdout)).toMatch(/^Dry run \(nothing written\)/);
    expect(installedFiles(repo)).toEqual([]);
    expect((await runCli(['install', '--no-skills'], { cwd: repo })).code).toBe(0);
    expect(installedFiles(repo)).toEqual(expectedFiles([]));
  });

  it('an edited runner and a new version conflict: exit 2 without a terminal, no hang, the repo unchanged', async () => {
    const repo = gitdir();
    await runCli(['install'], { cwd: repo });
    ageInstall(repo, { 'ralph/ralph.sh': '#!/bin/sh\n# ralphkit 0.0.1\n' });
    writeFileSync(path.join(repo, 'ralph/ralph.sh'), '#!/bin/sh\n# my edits\n');
    const before = snapshotTree(repo);
    // stdin is a pipe (not a terminal), and no --yes: ralphkit must refuse instead of prompting.
    const result = await runCli(['install'], { cwd: repo, timeoutMs: 20_000 });
    expect(result.signal).toBeNull();
    expect(result.code).toBe(2);
    expect(strip(result.stderr)).toContain(
      `ralph/ralph.sh: edited since installed, and ralphkit ships a new version; \`${cliAsTyped()} install --force\``,
    );
    expect(strip(result.stderr)).toContain('nothing was written');
    expect(snapshotTree(repo)).toEqual(before);
  });

  it('--force backs up the edited runner and never touches prd.json, progress.txt, prompt.md or review.md', async () => {
    const repo = gitdir();
    await runCli(['install'], { cwd: repo });
    ageInstall(repo, { 'ralph/ralph.sh': '#!/bin/sh\n# ralphkit 0.0.1\n' });
    const mine = {
      'ralph/ralph.sh': '#!/bin/sh\n# my edits\n',
      'ralph/prd.json': '{"my":"plan"}\n',
      'ralph/progress.txt': 'my log\n',
      'ralph/prompt.md': 'my prompt\n',
      'ralph/review.md': 'my review rules\n',
    };
    writeFiles(repo, mine);
    const result = await runCli(['install', '--force', '--json'], { cwd: repo });
    expect(result.code).toBe(0);
    const doc = JSON.parse(result.stdout);
    expect(doc.backups).toHaveLength(1);
    expect(readFileSync(path.join(repo, doc.backups[0].backup), 'utf8')).toBe(mine['ralph/ralph.sh']);
    expect(doc.backups[0].backup).toMatch(/^ralph\/\.backup\/\d{4}-\d\d-\d\dT[\d-]+Z\/ralph\/ralph\.sh$/);
    for (const state of ['ralph/prd.json', 'ralph/progress.txt', 'ralph/prompt.md', 'ralph/review.md'] as const) {
      expect(readFileSync(path.join(repo, state), 'utf8')).toBe(mine[state]);
    }
    expect(readFileSync(path.join(repo, 'ralph/ralph.sh'))).toEqual(
      readFileSync(path.join(ROOT, 'templates/ralph/ralph.sh')),
    );
  });

  it('refuses a symlinked ralph/ that points outside the repository (exit 2, nothing written)', async () => {
    const repo = gitdir();
    const outside = testdir('ralphkit-outside-');
    symlinkSync(outside, path.join(repo, 'ralph'));
    const result = await runCli(['install', '--json'], { cwd: repo });
    expect(result.code).toBe(2);
    expect(JSON.parse(result.stdout)).toMatchObject({ status: 'refused', exitCode: 2 });
    expect(strip(result.stderr)).toMatch(
      /refusing to write ralph\/.*: ralph is a symlink to .*, outside the repository/,
    );
    expect(readdirSync(outside)).toEqual([]);
    expect(existsSync(path.join(repo, '.claude'))).toBe(false);
  });

  it('outside a git repository: installs and warns that the loop needs git', async () => {
    const dir = testdir();
    const result = await runCli(['install'], { cwd: dir });
    expect(result.code).toBe(0);
    expect(strip(result.stderr)).toMatch(/warning: .* is not inside a git repository; the loop needs git/);
    expect(installedFiles(dir)).toEqual(expectedFiles());
    // Its next steps make the repository first: a bare `git add` would fail here.
    expect(strip(result.stdout)).toMatch(/^ {2}3\. git init && git add \.claude ralph && git commit /m);
    expect(strip(result.stdout)).not.toMatch(/^ {2}3\. git add /m);
  });

  it('rejects an unknown --agent as bad usage (exit 1)', async () => {
    const result = await runCli(['install', '--agent', 'cursor'], { cwd: gitdir() });
    expect(result.code).toBe(1);
    expect(strip(result.stderr)).toMatch(/unknown --agent cursor/);
  });
});

describe('ralph/ralph.sh (installed launcher)', () => {
  // An installed repository whose engine is `stub`. The launcher starts only the engine the manifest records: the
  // stand-in's hash is recorded there, in the installer's layout.
  const installStub = async (stub: string): Promise<string> => {
    const repo = gitdir();
    await runCli(['install', '--no-skills'], { cwd: repo });
    writeFileSync(path.join(repo, 'ralph/ralph.mjs'), stub);
    const manifestFile = path.join(repo, 'ralph/.ralphkit.json');
    const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
    manifest.files['ralph/ralph.mjs'].sha256 = createHash('sha256').update(stub).digest('hex');
    writeFileSync(manifestFile, `${JSON.stringify(manifest, null, 2)}\n`);
    return repo;
  };

  it('runs ralph.mjs beside it with `run` and every argument, from any folder', async () => {
    const repo = await installStub('console.log(JSON.stringify(process.argv.slice(2))); process.exitCode = 7;\n');
    mkdirSync(path.join(repo, 'sub'));
    const result = await run(path.join(repo, 'ralph/ralph.sh'), ['--agent-cmd', 'my agent "quoted"', '5'], {
      cwd: path.join(repo, 'sub'),
      sandboxDefault: true,
    });
    expect(result.code).toBe(7);
    expect(JSON.parse(result.stdout)).toEqual(['run', '--agent-cmd', 'my agent "quoted"', '5']);
  });

  it('refuses an engine that differs from the manifest before running a line of it (exit 2); --allow-modified-engine runs it', async () => {
    const repo = gitdir();
    await runCli(['install', '--no-skills'], { cwd: repo });
    const marker = path.join(testdir(), 'ran');
    writeFileSync(
      path.join(repo, 'ralph/ralph.mjs'),
      `\nimport('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(marker)}, 'x'));\n`,
      { flag: 'a' },
    );
    const refused = await run(path.join(repo, 'ralph/ralph.sh'), ['--help'], { cwd: repo });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      'ralph: ralph/ralph.mjs differs from what ralphkit installed (ralph/.ralphkit.json): a modified engine could pass anything; not starting (exit 2)',
    );
    expect(refused.stderr).toContain('npx ralphkit install --force');
    expect(existsSync(marker)).toBe(false);
    const allowed = await run(path.join(repo, 'ralph/ralph.sh'), ['--allow-modified-engine', '--help'], { cwd: repo });
    expect(allowed.code, allowed.stderr).toBe(0);
    expect(existsSync(marker)).toBe(true);
    // The launcher and the engine name ralphkit the same way: the command on PATH when there is one.
    const bin = testdir('ralphkit-bin-');
    writeFileSync(path.join(bin, 'ralphkit'), '#!/bin/sh\n', { mode: 0o755 });
    const env = { PATH: `${bin}${path.delimiter}${process.env.PATH}` };
    writeFileSync(
      path.join(repo, 'ralph/prd.json'),
      JSON.stringify(plan([story('A', { title: 'a', acceptanceCriteria: ['a'] })], { branchName: 'ralph/x' })),
    );
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'plan and engine');
    const fix = (stderr: string) => /hint: put (?:it|them) back with: (.*?) install --force/.exec(stderr)?.[1];
    const viaSh = await run(path.join(repo, 'ralph/ralph.sh'), ['--agent-cmd', 'true', '1'], { cwd: repo, env });
    const viaNode = await run(process.execPath, ['ralph/ralph.mjs', 'run', '--agent-cmd', 'true', '1'], {
      cwd: repo,
      env,
    });
    expect([viaSh.code, viaNode.code]).toEqual([2, 2]);
    expect([fix(viaSh.stderr), fix(viaNode.stderr)]).toEqual(['ralphkit', 'ralphkit']);
    expect(
      fix((await run(process.execPath, ['ralph/ralph.mjs', 'run', '--agent-cmd', 'true', '1'], { cwd: repo })).stderr),
    ).toBe(fix(refused.stderr));
  });

  it('an engine as installed starts with one Node.js process (its hash from sha256sum); with CRLF line ends Node.js decides, and runs it', async () => {
    const repo = gitdir();
    await runCli(['install', '--no-skills'], { cwd: repo });
    // node on PATH through a shim that notes each start, then runs the real one.
    const bin = testdir('ralphkit-bin-');
    const starts = path.join(bin, 'starts');
    writeFileSync(path.join(bin, 'node'), `#!/bin/sh\necho "$1" >> '${starts}'\nexec '${process.execPath}' "$@"\n`, {
      mode: 0o755,
    });
    const env = { PATH: `${bin}${path.delimiter}${process.env.PATH}` };
    const nodeStarts = async () => {
      rmSync(starts, { force: true });
      const r = await run(path.join(repo, 'ralph/ralph.sh'), ['--help'], { cwd: repo, env });
      expect(r.code, r.stderr).toBe(0);
      return readFileSync(starts, 'utf8').trim().split('\n');
    };
    expect(await nodeStarts()).toEqual([path.join(realpathSync(repo), 'ralph/ralph.mjs')]);
    // The same engine with CRLF line ends (a Windows checkout): its hash differs, Node.js reads it as installed.
    const engine = path.join(repo, 'ralph/ralph.mjs');
    writeFileSync(engine, readFileSync(engine, 'utf8').replace(/\n/g, '\r\n'));
    expect(await nodeStarts()).toEqual(['-e', path.join(realpathSync(repo), 'ralph/ralph.mjs')]);
  });

  it.each(['a second entry for the engine', 'a decoy entry outside "files"', 'an engine with CRLF line ends'])(
    "a manifest that would fool the launcher's quick read (%s) is left to Node.js, which refuses the modified engine",
    async (craft) => {
      const repo = gitdir();
      await runCli(['install', '--no-skills'], { cwd: repo });
      const engineFile = path.join(repo, 'ralph/ralph.mjs');
      const manifestFile = path.join(repo, 'ralph/.ralphkit.json');
      const marker = path.join(testdir(), 'ran');
      const sha = (bytes: string) => createHash('sha256').update(bytes).digest('hex');
      const manifest = JSON.parse(readFileSync(manifestFile, 'utf8'));
      const real: string = manifest.files['ralph/ralph.mjs'].sha256;
      let evil = `${readFileSync(engineFile, 'utf8')}\nimport('node:fs').then((fs) => fs.writeFileSync(${JSON.stringify(marker)}, 'x'));\n`;
      let text: string;
      if (craft.startsWith('an engine with CRLF')) {
        // The raw bytes' hash recorded: Node.js hashes the engine with LF, as a Windows checkout is read.
        evil = evil.replace(/\n/g, '\r\n');
        manifest.files['ralph/ralph.mjs'].sha256 = sha(evil);
        text = `${JSON.stringify(manifest, null, 2)}\n`;
      } else if (craft.startsWith('a second entry')) {
        // The installer's layout names the modified engine; JSON.parse keeps the later, one-line entry: the real one.
        manifest.files['ralph/ralph.mjs'].sha256 = sha(evil);
        text = `${JSON.stringify(manifest, null, 2)}\n`.replace(
          /\n {2}\}\n\}\n$/,
          `,\n    "ralph/ralph.mjs": { "sha256": "${real}", "source": "ralphkit" }\n  }\n}\n`,
        );
      } else {
        // The real entry on one line; one laid out as the installer would, in another object, names the modified engine.
        const layout = `${JSON.stringify({ ...manifest, zzz: { 'ralph/ralph.mjs': { sha256: sha(evil) } } }, null, 2)}\n`;
        text = layout.replace(
          /\n {4}"ralph\/ralph\.mjs": \{\n {6}"sha256": "[0-9a-f]{64}",\n {6}"source": "ralphkit"\n {4}\}/,
          `\n    "ralph/ralph.mjs": { "sha256": "${real}", "source": "ralphkit" }`,
        );
      }
      writeFileSync(engineFile, evil);
      writeFileSync(manifestFile, text);
      // What Node.js reads is the real entry: the engine differs from it.
      expect(JSON.parse(text).files['ralph/ralph.mjs'].sha256).toBe(craft.startsWith('an engine') ? sha(evil) : real);
      const r = await run(path.join(repo, 'ralph/ralph.sh'), ['--help'], { cwd: repo });
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('ralph: ralph/ralph.mjs differs from what ralphkit installed');
      expect(existsSync(marker)).toBe(false);
    },
  );

  // direnv's `PATH_add bin` puts the repository's bin/ first on PATH, and an empty entry (PATH=":$PATH") is the
  // current folder: a program a sandboxed agent leaves there (an ignored bin/node) would run outside the sandbox.
  const plant = (repo: string, ran: string, names: string[]) => {
    for (const rel of names) {
      mkdirSync(path.dirname(path.join(repo, rel)), { recursive: true });
      writeFileSync(path.join(repo, rel), `#!/bin/sh\necho "$0" >> '${ran}'\nexit 1\n`, { mode: 0o755 });
    }
  };

  it.each([
    ['a repository folder first (direnv PATH_add bin)', (repo: string) => path.join(repo, 'bin')],
    ['an empty entry (the current folder)', () => ''],
    ['a relative entry', () => 'bin'],
    [
      'a folder outside that is a link into the repository',
      (repo: string) => {
        const link = path.join(testdir(), 'bin');
        symlinkSync(path.join(repo, 'bin'), link);
        return link;
      },
    ],
  ])(
    'starts no program of the repository from PATH (%s): the engine runs on the node found outside, with your PATH as it was',
    async (_, entry) => {
      const repo = await installStub('console.log(JSON.stringify([process.execPath, process.env.PATH]));\n');
      const ran = path.join(testdir(), 'ran');
      // What the launcher starts: node, and the quick hash check's sed, grep and sha256sum.
      plant(
        repo,
        ran,
        ['node', 'sed', 'grep', 'sha256sum', 'dirname'].flatMap((name) => [name, `bin/${name}`]),
      );
      const PATH = `${entry(repo)}${path.delimiter}${process.env.PATH}`;
      const r = await run(path.join(repo, 'ralph/ralph.sh'), ['--help'], { cwd: repo, env: { PATH } });
      expect(existsSync(ran) ? readFileSync(ran, 'utf8') : '').toBe('');
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual([process.execPath, PATH]);
    },
  );

  it("loads nothing your environment names in the repository: NODE_OPTIONS reaches the engine aside (a --require of an ignored .pnp.cjs the agent can rewrite), and the loader's variables naming the repository go", async () => {
    const repo = await installStub(
      'console.log(JSON.stringify([process.env.NODE_OPTIONS, process.env.RALPHKIT_NODE_OPTIONS, process.env.LD_LIBRARY_PATH, process.env.LD_PRELOAD, process.env.OPENSSL_CONF]));\n',
    );
    const ran = path.join(testdir(), 'ran');
    writeFileSync(path.join(repo, '.pnp.cjs'), `require('fs').writeFileSync(${JSON.stringify(ran)}, 'x');\n`);
    const NODE_OPTIONS = `--require ${path.join(repo, '.pnp.cjs')}`;
    const env = {
      NODE_OPTIONS,
      LD_LIBRARY_PATH: path.join(repo, 'build/lib'),
      LD_PRELOAD: '',
      // node reads it at start and loads the providers it names (a module the agent builds in the repository)
      OPENSSL_CONF: path.join(repo, 'config/openssl.cnf'),
    };
    const r = await run(path.join(repo, 'ralph/ralph.sh'), ['--help'], { cwd: repo, env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual([null, NODE_OPTIONS, null, '', null]);
    expect(existsSync(ran)).toBe(false);
  });

  it('refuses to start when the only node on PATH is in the repository (exit 127), saying what to do', async () => {
    const repo = gitdir();
    await runCli(['install', '--no-skills'], { cwd: repo });
    const ran = path.join(testdir(), 'ran');
    plant(repo, ran, ['bin/node']);
    const r = await run('/bin/sh', ['ralph/ralph.sh'], { cwd: repo, env: { PATH: path.join(repo, 'bin') } });
    expect(r.code).toBe(127);
    expect(r.stderr).toContain(
      `ralph.sh: the only 'node' on PATH is ${path.join(repo, 'bin/node')}, inside the repository or found through a relative or empty PATH entry (the current folder): the agent can write there, so it is not run.`,
    );
    expect(r.stderr).toContain(
      'Put the folder of your Node.js 20 or newer on PATH by its absolute path, outside the repository, then run ralph/ralph.sh again.',
    );
    expect(existsSync(ran)).toBe(false);
  });

  it('says clearly that node is missing (exit 127)', async () => {
    const repo = gitdir();
    await runCli(['install', '--no-skills'], { cwd: repo });
    const bin = testdir('ralphkit-bin-');
    symlinkSync('/usr/bin/dirname', path.join(bin, 'dirname'));
    const result = await run('/bin/sh', ['ralph/ralph.sh'], { cwd: repo, env: { PATH: bin } });
    expect(result.code).toBe(127);
    expect(result.stderr).toMatch(/needs Node\.js 20 or newer, and 'node' is not on PATH/);
  });
});

describe('help', () => {
  it('install --help teaches the options, the decision table and examples', async () => {
    const result = await runCli(['install', '--help']);
    expect(result.code).toBe(0);
    // Examples name ralphkit as it was started (node <bin> here), shown as `ralphkit`.
    expect(strip(result.stdout).replaceAll(cliAsTyped(), 'ralphkit')).toMatchInlineSnapshot(`
      "Usage: ralphkit install [options]

      Put the Ralph loop into a repository: ralph/ralph.sh (the runner),
      ralph/ralph.mjs (the engine), ralph/prompt.md, prd.json, progress.txt and
      review.md (yours to edit), and the prd and ralph skills. Run it again to
      upgrade: files you never edited are replaced, files you edited are not.

      Options:
        --cwd <dir>       repository to install into (default: the current folder)
        --force           back up managed files you edited and install ralphkit's
                          versions
        --dry-run         print the plan, write nothing
        --diff            print the plan with unified diffs of files that would
                          change; writes nothing
        --json            print one JSON document on stdout (logs go to stderr)
        -y, --yes         never prompt: conflicts end with exit 2 unless --force
        --agent <list>    skill folders, comma-separated: claude (.claude/skills),
                          agents (.agents/skills) (default: the folders the last
                          install used, else claude)
        --no-skills       install ralph/ only, without the prd and ralph skills
        --claude-hook     add the in-session loop for Claude Code: ralphkit's Stop
                          hook in .claude/settings.json (your settings kept) and the
                          /ralph-loop command (.claude/commands/ralph-loop.md); type
                          /ralph-loop --max-iterations 5 in Claude Code to start it;
                          later installs keep both current
        --no-claude-hook  take ralphkit's Stop hook out of .claude/settings.json again
                          (leaving the rest as it was) and remove /ralph-loop
        --ci <provider>   also install .github/workflows/ralph.yml, the loop on GitHub
                          Actions (manual runs, one job per plan, a pull request per
                          plan); later installs keep it current (choices: "github")
        --no-ci           take that workflow out again (kept, with a conflict, if you
                          edited it)
        -h, --help        display help for command

      What happens to each file:
        create      missing: written
        identical   already the same: left alone
        upgrade     unchanged since ralphkit installed it, and there is a new version: replaced
        fix-mode    up to date but no longer executable (ralph/ralph.sh): made executable again
        keep        you edited it, nothing new from ralphkit: left alone
        conflict    you edited it, and there is a new version: nothing at all is written (exit 2)
                    unless you answer the prompt or pass --force
        overwrite   with --force: yours is copied to ralph/.backup/<time>/, then replaced
        skip-state  ralph/prompt.md, prd.json, progress.txt, review.md are yours once created: never
                    touched, not even with --force
        merge       .claude/settings.json under --claude-hook or --no-claude-hook: only
                    ralphkit's Stop hook entry goes in or out; the rest stays byte for byte
        remove      --no-claude-hook: .claude/settings.json goes when ralphkit created it
                    and nothing else is in it. --no-claude-hook: .claude/commands/ralph-loop.md,
                    --no-ci: .github/workflows/ralph.yml go when they are as installed
                    (edited: a conflict, unless --force backs yours up first); folders
                    left empty go too

      Examples:
        $ ralphkit install                         install into the current repository
        $ ralphkit install --dry-run --diff        preview an upgrade, with diffs
        $ ralphkit install --force          upgrade; your edited files are backed up
        $ ralphkit install --agent claude,agents   skills for Claude Code and for Codex & co.
        $ ralphkit install --cwd ../app --json     install elsewhere, machine-readable
        $ ralphkit install --claude-hook           also /ralph-loop and its Stop hook, for Claude Code
        $ ralphkit install --ci github             also the loop on GitHub Actions (.github/workflows/ralph.yml)
        $ ralphkit install --no-ci                 take that workflow out again

      --claude-hook, --ci and --agent are recorded in ralph/.ralphkit.json: a plain install keeps them up to date.
      The workflow needs repository secrets: README.md, "Loops on GitHub Actions".

      Exit codes: 0 done or nothing to do · 1 error or bad usage · 2 refused (conflict, unsafe
      path, invalid input): nothing was changed.
      "
    `);
  });
});

describe('install: the next steps it prints', () => {
  it.each([
    [[], '.claude ralph'],
    [['--agent', 'claude,agents'], '.agents .claude ralph'],
    [['--no-skills'], 'ralph'],
  ])('with %j names every folder it wrote in the commit that must precede the first run', async (flags, folders) => {
    const repo = gitdir();
    const r = await runCli(['install', '--yes', '--cwd', repo, ...flags]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`git add ${folders} && git commit -m "Add the Ralph loop"`);
    // Committing exactly that leaves nothing behind for the loop's clean-tree refusal.
    await run('git', ['add', ...folders.split(' ')], { cwd: repo });
    await run('git', ['commit', '-qm', 'Add the Ralph loop'], { cwd: repo });
    expect((await run('git', ['status', '--porcelain'], { cwd: repo })).stdout).toBe('');
  });

  it.each([
    [[], 'in Claude Code, ask for a PRD', './ralph/ralph.sh 10'],
    [['--agent', 'claude,agents'], 'in Claude Code, ask for a PRD', './ralph/ralph.sh 10'],
    [
      ['--agent', 'agents'],
      'in Codex (or another agent that reads .agents/skills), ask for a PRD',
      './ralph/ralph.sh --agent codex 10',
    ],
    [['--agent', 'agents', '--no-skills'], 'write your plan into ralph/prd.json', './ralph/ralph.sh 10'],
  ])('with %j names the agent that has the skills, and starts the loop with it', async (flags, ask, start) => {
    const r = await runCli(['install', '--yes', '--cwd', gitdir(), ...flags]);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`  1. ${ask}`);
    expect(r.stdout).toMatch(new RegExp(`^  4\\. ${start.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`, 'm'));
  });
});
