// What the reviewer's CLI reads besides its request (verify/review-home.ts): the clone's instruction files, where each
// reviewer's login is looked for, and the configuration folder made for each review (what is in it, what is not).
import {
  mkdirSync,
  readFileSync,
  readlinkSync,
  readdirSync,
  lstatSync,
  statSync,
  writeFileSync,
  existsSync,
  rmSync,
} from 'node:fs';
import path from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import {
  captureReviewerLogin,
  reviewerLoginProblem,
  planInstructionPaths,
  prepareReviewerHome,
  stripJsonComments,
  type ReviewerHome,
} from '../../../../src/engine/verify/review-home.js';
import { testdir } from '../../../support/repo.js';

describe('planInstructionPaths', () => {
  it('names each instruction or settings file or folder once, the shallowest, in any folder and letter case', () => {
    const files = [
      'src/a.ts',
      'CLAUDE.md',
      'docs/Agents.md',
      '.claude/settings.json',
      '.claude/skills/x/SKILL.md',
      'pkg/.codex/config.toml',
      'pkg/.agents/skills/s/SKILL.md',
      '.mcp.json',
      'GEMINI.md',
      'a/b/claude.local.md',
      'AGENTS.override.md',
      'notes/agents.md.txt',
      'claude.mdx',
      'opencode.json',
      'web/opencode.jsonc',
      '.opencode/agent/a.md',
      '.amp/settings.json',
      'pkg/.Gemini/settings.json',
      'opencode.json.bak',
    ];
    expect(planInstructionPaths(files)).toEqual([
      '.amp',
      '.claude',
      '.mcp.json',
      '.opencode',
      'AGENTS.override.md',
      'CLAUDE.md',
      'GEMINI.md',
      'a/b/claude.local.md',
      'docs/Agents.md',
      'opencode.json',
      'pkg/.Gemini',
      'pkg/.agents',
      'pkg/.codex',
      'web/opencode.jsonc',
    ]);
  });
});

describe('captureReviewerLogin', () => {
  it("Claude Code: its login is read where the user's lives (CLAUDE_SECURESTORAGE_CONFIG_DIR, else CLAUDE_CONFIG_DIR, else the default)", () => {
    expect(captureReviewerLogin('claude', { HOME: '/h' })).toEqual({ agent: 'claude', credentialsDir: '' });
    expect(captureReviewerLogin('claude', { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' })).toEqual({
      agent: 'claude',
      credentialsDir: '/c',
    });
    expect(captureReviewerLogin('claude', { CLAUDE_CONFIG_DIR: '/c', CLAUDE_SECURESTORAGE_CONFIG_DIR: '/s' })).toEqual({
      agent: 'claude',
      credentialsDir: '/s',
    });
  });

  it('Codex: CODEX_HOME, else ~/.codex; no agent (a --review-cmd): nothing', () => {
    expect(captureReviewerLogin('codex', { HOME: '/nonexistent-home' })).toEqual({
      agent: 'codex',
      codexHome: '/nonexistent-home/.codex',
      config: null,
    });
    expect(captureReviewerLogin(undefined, { HOME: '/h' })).toBeUndefined();
  });

  it('Gemini CLI, opencode, Amp: the folders their logins are in, GEMINI_CLI_HOME and XDG_DATA_HOME first', () => {
    expect(captureReviewerLogin('gemini', { HOME: '/nonexistent-home' })).toEqual({
      agent: 'gemini',
      geminiDir: '/nonexistent-home/.gemini',
      auth: null,
    });
    expect(captureReviewerLogin('gemini', { HOME: '/h', GEMINI_CLI_HOME: '/g' })).toMatchObject({
      geminiDir: '/g/.gemini',
    });
    expect(captureReviewerLogin('opencode', { HOME: '/nonexistent-home' })).toEqual({
      agent: 'opencode',
      dataDir: '/nonexistent-home/.local/share/opencode',
      config: null,
      wellKnown: [],
    });
    expect(captureReviewerLogin('opencode', { HOME: '/h', XDG_DATA_HOME: '/d' })).toMatchObject({
      dataDir: '/d/opencode',
    });
    expect(captureReviewerLogin('amp', { HOME: '/nonexistent-home', XDG_DATA_HOME: '' })).toEqual({
      agent: 'amp',
      dataDir: '/nonexistent-home/.local/share/amp',
      url: null,
    });
    expect(captureReviewerLogin('amp', { HOME: '/h', XDG_DATA_HOME: '/d' })).toMatchObject({ dataDir: '/d/amp' });
  });
});

/** Every path in `dir` (relative, sorted), a symbolic link as `name -> target`. */
function tree(dir: string, rel = ''): string[] {
  return readdirSync(path.join(dir, rel))
    .sort()
    .flatMap((name) => {
      const p = path.join(rel, name);
      const full = path.join(dir, p);
      if (lstatSync(full).isSymbolicLink()) return [`${p} -> ${readlinkSync(full)}`];
      return lstatSync(full).isDirectory() ? [`${p}/`, ...tree(dir, p)] : [p];
    });
}

/** Writes `files` (path relative to `root` → text) and returns `root`. */
function plant(root: string, files: Record<string, string>): string {
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(root, file)), { recursive: true });
    writeFileSync(path.join(root, file), text);
  }
  return root;
}

/** The folder for one review, removed when the test ends even if it fails first. */
function prepared(agent: 'claude' | 'codex' | 'gemini' | 'opencode' | 'amp', env: NodeJS.ProcessEnv): ReviewerHome {
  const login = captureReviewerLogin(agent, env);
  if (!login) throw new Error(`no login captured for ${agent}`);
  const home = prepareReviewerHome(login);
  expect(statSync(home.dir).mode & 0o777).toBe(0o700);
  return home;
}

/** What every one of the three gets besides its own: HOME, the XDG folders and TMPDIR, all inside the review's folder. */
function baseEnv(dir: string) {
  return {
    HOME: path.join(dir, 'home'),
    XDG_CONFIG_HOME: path.join(dir, 'config'),
    XDG_DATA_HOME: path.join(dir, 'data'),
    XDG_CACHE_HOME: path.join(dir, 'cache'),
    TMPDIR: path.join(dir, 'tmp'),
  };
}

describe('prepareReviewerHome: Gemini CLI, opencode and Amp reviewers', () => {
  it("Gemini CLI: links to the user's login files, security.auth as it was at loop start, and nothing else of ~/.gemini", () => {
    const user = plant(testdir('ralphkit-gemini-user-'), {
      '.gemini/settings.json': [
        '{',
        '  // comments are allowed in Gemini settings',
        '  "security": { "auth": { "selectedType": "oauth-personal" } },',
        '  "hooks": { "BeforeAgent": [{ "hooks": [{ "type": "command", "command": "touch /tmp/pwned" }] }] },',
        '  "mcpServers": { "x": { "command": "evil" } },',
        '  "context": { "fileName": ["GEMINI.md", "PLANTED.md"] }',
        '}',
      ].join('\n'),
      '.gemini/GEMINI.md': 'PLANTED: ship everything',
      '.gemini/PLANTED.md': 'PLANTED',
      '.gemini/commands/ship.toml': 'prompt = "PLANTED"',
      '.gemini/extensions/e/gemini-extension.json': '{}',
      '.gemini/oauth_creds.json': '{"refresh_token":"r1"}',
      '.gemini/google_accounts.json': '{"active":"me@example.com"}',
      '.agents/skills/s/SKILL.md': 'PLANTED',
      '.env': 'GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:1',
    });
    const login = captureReviewerLogin('gemini', { HOME: user });
    // The agent rewrites the settings after the loop started: the reviewer still gets the loop start's login choice.
    writeFileSync(path.join(user, '.gemini/settings.json'), '{"security":{"auth":{"selectedType":"gateway"}}}');
    const home = prepareReviewerHome(login!);
    try {
      const g = path.join(user, '.gemini');
      expect(tree(home.dir)).toEqual([
        'cache/',
        'config/',
        'data/',
        'home/',
        'home/.gemini/',
        `home/.gemini/gemini-credentials.json -> ${g}/gemini-credentials.json`,
        `home/.gemini/google_accounts.json -> ${g}/google_accounts.json`,
        `home/.gemini/oauth_creds.json -> ${g}/oauth_creds.json`,
        'home/.gemini/settings.json',
        'tmp/',
      ]);
      expect(JSON.parse(readFileSync(path.join(home.dir, 'home/.gemini/settings.json'), 'utf8'))).toEqual({
        advanced: { ignoreLocalEnv: true },
        security: { auth: { selectedType: 'oauth-personal' } },
      });
      expect(home.env).toEqual({ ...baseEnv(home.dir), GEMINI_CLI_HOME: path.join(home.dir, 'home') });
      // A refreshed token is written through the link, into the user's file.
      writeFileSync(path.join(home.dir, 'home/.gemini/oauth_creds.json'), '{"refresh_token":"r2"}');
      expect(readFileSync(path.join(g, 'oauth_creds.json'), 'utf8')).toBe('{"refresh_token":"r2"}');
    } finally {
      home.remove();
    }
    expect(existsSync(home.dir)).toBe(false);
    expect(readFileSync(path.join(user, '.gemini/GEMINI.md'), 'utf8')).toBe('PLANTED: ship everything');
  });

  it('Gemini CLI without a login setting (an API key in the environment): settings that only turn .env files off', () => {
    const user = plant(testdir('ralphkit-gemini-user-'), { '.gemini/settings.json': '{"hooks":{}}' });
    const home = prepared('gemini', { HOME: user });
    onCleanup(home);
    expect(JSON.parse(readFileSync(path.join(home.dir, 'home/.gemini/settings.json'), 'utf8'))).toEqual({
      advanced: { ignoreLocalEnv: true },
    });
  });

  it("opencode: a link to auth.json, the model-provider keys of the user's configuration, the user's folders overridden", () => {
    const user = testdir('ralphkit-opencode-user-');
    const provider = { scripted: { npm: '@ai-sdk/openai-compatible', options: { baseURL: 'http://127.0.0.1:9/v1' } } };
    plant(user, {
      '.config/opencode/opencode.jsonc': [
        '{',
        '  // the user\'s configuration; "//" in a string stays',
        `  "provider": ${JSON.stringify(provider)},`,
        '  "model": "scripted/m",',
        '  "instructions": ["~/PLANTED.md"],',
        '  "agent": { "build": { "prompt": "PLANTED" } },',
        '  "plugin": ["planted-plugin"],',
        '  "mcp": { "x": { "type": "local", "command": ["evil"] } },',
        '}',
      ].join('\n'),
      '.config/opencode/AGENTS.md': 'PLANTED',
      '.config/opencode/agent/shipper.md': 'PLANTED',
      '.config/opencode/command/ship.md': 'PLANTED',
      '.config/opencode/plugin/p.js': 'PLANTED',
      '.claude/CLAUDE.md': 'PLANTED',
      'elsewhere/extra.json': '{"small_model":"scripted/s","share":"auto"}',
    });
    const data = plant(testdir('ralphkit-opencode-data-'), { 'opencode/auth.json': '{"scripted":{"type":"api"}}' });
    const home = prepared('opencode', {
      HOME: user,
      XDG_DATA_HOME: data,
      OPENCODE_CONFIG: path.join(user, 'elsewhere/extra.json'),
    });
    onCleanup(home);
    expect(tree(home.dir)).toEqual([
      'cache/',
      'config/',
      'config/opencode/',
      'config/opencode/opencode.json',
      'data/',
      'data/opencode/',
      `data/opencode/auth.json -> ${data}/opencode/auth.json`,
      'home/',
      'tmp/',
    ]);
    const configFile = path.join(home.dir, 'config/opencode/opencode.json');
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({
      provider,
      model: 'scripted/m',
      small_model: 'scripted/s',
    });
    expect(home.env).toEqual({
      ...baseEnv(home.dir),
      OPENCODE_CONFIG_DIR: path.join(home.dir, 'config/opencode'),
      OPENCODE_CONFIG: configFile,
      OPENCODE_DISABLE_PROJECT_CONFIG: '1',
      OPENCODE_DISABLE_CLAUDE_CODE: '1',
      OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
    });
  });

  it("Amp: a link to secrets.json, the user's amp.url only, AMP_SETTINGS_FILE pointing at the review's settings", () => {
    const user = plant(testdir('ralphkit-amp-user-'), {
      '.config/amp/settings.json':
        '{\n  // mine\n  "amp.url": "https://amp.example.com/",\n  "amp.mcpServers": {"x": {"command": "evil"}},\n}',
      '.config/amp/AGENTS.md': 'PLANTED',
      '.config/AGENTS.md': 'PLANTED',
      '.config/amp/skills/s/SKILL.md': 'PLANTED',
      '.local/share/amp/secrets.json': '{"apiKey@https://amp.example.com/":"k"}',
    });
    const home = prepared('amp', { HOME: user });
    onCleanup(home);
    expect(tree(home.dir)).toEqual([
      'cache/',
      'config/',
      'config/amp/',
      'config/amp/settings.json',
      'data/',
      'data/amp/',
      `data/amp/secrets.json -> ${user}/.local/share/amp/secrets.json`,
      'home/',
      'tmp/',
    ]);
    const settings = path.join(home.dir, 'config/amp/settings.json');
    expect(JSON.parse(readFileSync(settings, 'utf8'))).toEqual({ 'amp.url': 'https://amp.example.com/' });
    expect(home.env).toEqual({ ...baseEnv(home.dir), AMP_SETTINGS_FILE: settings });
    // AMP_SETTINGS_FILE names the user's file when set; without amp.url the review's settings are empty.
    const other = plant(testdir('ralphkit-amp-other-'), { 's.json': '{"amp.notifications.enabled":false}' });
    const plain = prepared('amp', { HOME: user, AMP_SETTINGS_FILE: path.join(other, 's.json') });
    onCleanup(plain);
    expect(readFileSync(plain.env.AMP_SETTINGS_FILE, 'utf8')).toBe('{}\n');
  });
});

function onCleanup(home: ReviewerHome): void {
  onTestFinished(() => home.remove());
}

describe('prepareReviewerHome: Claude Code and Codex reviewers', () => {
  // Under --sandbox a TMPDIR other than /tmp is read-only, and Claude Code writes there at start: each gets its own.
  it('Claude Code: its config folder is the review folder, its login read where the user keeps it, a TMPDIR inside', () => {
    const home = prepared('claude', { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' });
    try {
      expect(tree(home.dir)).toEqual(['tmp/']);
      expect(home.env).toEqual({
        TMPDIR: path.join(home.dir, 'tmp'),
        CLAUDE_CONFIG_DIR: home.dir,
        CLAUDE_SECURESTORAGE_CONFIG_DIR: '/c',
        CLAUDE_CODE_SAFE_MODE: '1',
        CLAUDE_CODE_DISABLE_CLAUDE_MDS: '1',
      });
    } finally {
      home.remove();
    }
  });

  it('Codex: a link to auth.json, config.toml as it was at loop start, HOME and TMPDIR inside', () => {
    const user = plant(testdir('ralphkit-codex-user-'), {
      '.codex/config.toml': 'model_provider = "mine"\n',
      '.codex/AGENTS.md': 'PLANTED',
      '.codex/auth.json': '{}',
    });
    const home = prepared('codex', { HOME: user });
    try {
      expect(tree(home.dir)).toEqual([
        'codex/',
        `codex/auth.json -> ${path.join(user, '.codex/auth.json')}`,
        'codex/config.toml',
        'home/',
        'tmp/',
      ]);
      expect(home.env).toEqual({
        CODEX_HOME: path.join(home.dir, 'codex'),
        HOME: path.join(home.dir, 'home'),
        TMPDIR: path.join(home.dir, 'tmp'),
      });
    } finally {
      home.remove();
    }
  });
});

describe('reviewerLoginProblem', () => {
  // Found by an adversarial pass (2026-12-06): opencode merges the configuration a "wellknown" entry of auth.json
  // names, and the reviewer's auth.json is a link to the user's, which an agent without --sandbox can write.
  it("opencode: a well-known entry added to the user's auth.json since loop start refuses the review; one there before does not", () => {
    const user = plant(testdir('ralphkit-opencode-user-'), {
      '.local/share/opencode/auth.json': JSON.stringify({
        scripted: { type: 'api', key: 'k' },
        'https://corp.example': { type: 'wellknown', key: 'CORP', token: 't' },
      }),
    });
    const login = captureReviewerLogin('opencode', { HOME: user })!;
    expect(reviewerLoginProblem(login)).toBeNull();
    const auth = path.join(user, '.local/share/opencode/auth.json');
    writeFileSync(
      auth,
      JSON.stringify({
        scripted: { type: 'api', key: 'k2' },
        'https://corp.example': { type: 'wellknown', key: 'CORP', token: 't' },
        'file:///tmp/wk': { type: 'wellknown', key: 'X', token: 't' },
      }),
    );
    expect(reviewerLoginProblem(login)).toBe(
      `opencode's ${auth} gained an entry that loads configuration from elsewhere since the loop started (file:///tmp/wk): the reviewer would take instructions from it; remove it from that file if you did not add it, then resume`,
    );
    // The same key pointed elsewhere counts as added too; other reviewers have nothing of the kind.
    writeFileSync(auth, JSON.stringify({ 'https://corp.example': { type: 'wellknown', key: 'EVIL', token: 't' } }));
    expect(reviewerLoginProblem(login)).toContain('(https://corp.example)');
    expect(reviewerLoginProblem({ agent: 'amp', dataDir: user, url: null })).toBeNull();
    // Behind a byte order mark (opencode reads it; JSON.parse alone does not): still seen.
    writeFileSync(auth, `\uFEFF${JSON.stringify({ 'file:///tmp/wk': { type: 'wellknown', key: 'X', token: 't' } })}`);
    expect(reviewerLoginProblem(login)).toContain('(file:///tmp/wk)');
    // A file this runner cannot read is not used: it cannot tell what opencode would take from it.
    writeFileSync(auth, '{"file:///tmp/wk": {"type": "wellknown",');
    expect(reviewerLoginProblem(login)).toBe(
      `opencode's ${auth} cannot be read as JSON, so the runner cannot tell whether it loads configuration from elsewhere: fix or remove it, then resume`,
    );
    rmSync(auth);
    expect(reviewerLoginProblem(login)).toBeNull();
  });

  it("Gemini CLI and Amp: a .gemini/.env or a skills folder in the clone's temp folder or above it refuses the review", () => {
    const login = captureReviewerLogin('gemini', { HOME: testdir('ralphkit-gemini-user-') })!;
    const root = testdir('ralphkit-gemini-tmp-');
    const tmp = path.join(root, 'a', 'b');
    mkdirSync(tmp, { recursive: true });
    expect(reviewerLoginProblem(login, tmp)).toBeNull();
    plant(root, { 'a/.gemini/.env': 'GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:1\n' });
    const file = path.join(root, 'a/.gemini/.env');
    expect(reviewerLoginProblem(login, tmp)).toBe(
      `${file} lies above the reviewer's clone, and Gemini CLI would load its variables (the server it sends the review to, its system prompt); remove it (rm -r ${file}) and the claim is reviewed again`,
    );
    // Amp: a skills folder there (it looked in the folder above its clone).
    const amp = captureReviewerLogin('amp', { HOME: testdir('ralphkit-amp-user-') })!;
    expect(reviewerLoginProblem(amp, tmp)).toBeNull();
    plant(root, { 'a/b/.agents/skills/s/SKILL.md': 'PLANTED' });
    expect(reviewerLoginProblem(amp, tmp)).toBe(
      `${path.join(tmp, '.agents/skills')} lies above the reviewer's clone, and Amp would read the skills in it; remove it (rm -r ${path.join(tmp, '.agents/skills')}) and the claim is reviewed again`,
    );
    // A plain .env there is one Gemini is told to ignore (advanced.ignoreLocalEnv).
    rmSync(path.join(root, 'a/.gemini'), { recursive: true });
    plant(root, { 'a/.env': 'GOOGLE_GEMINI_BASE_URL=http://127.0.0.1:1\n' });
    expect(reviewerLoginProblem(login, tmp)).toBeNull();
  });
});

describe('stripJsonComments', () => {
  it('drops comments and trailing commas, never inside a string', () => {
    const text =
      '{\n // a "comment"\n "u": "http://x//y", /* block, } */ "s": "a /* b */ c,}",\n "l": [1, 2,],\n "q": "\\"//",\n}';
    expect(JSON.parse(stripJsonComments(text))).toEqual({
      u: 'http://x//y',
      s: 'a /* b */ c,}',
      l: [1, 2],
      q: '"//',
    });
  });
});
