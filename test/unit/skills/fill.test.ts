import { describe, expect, it } from 'vitest';
import { firstHeading, nameFromFileName, planSkillFile } from '../../../src/skills/fill.js';
import {
  AGENT_SKILLS_RULES,
  CLAUDE_CODE_RULES,
  checkSkill,
  checkSkillDescription,
  checkSkillName,
} from '../../../src/skills/rules.js';
import { parseAgents, skillFilesFor } from '../../../src/skills/agents.js';
import { canPrompt } from '../../../src/util/prompt.js';

describe('planSkillFile: filling frontmatter', () => {
  it.each([
    [
      'My Review Notes.md',
      '# Review checklist\n\nBody.\n',
      '---\nname: my-review-notes\ndescription: Review checklist\n---\n# Review checklist\n\nBody.\n',
    ],
    [
      'myNotes.md',
      '# Notes: the #1 rule\n',
      "---\nname: my-notes\ndescription: 'Notes: the #1 rule'\n---\n# Notes: the #1 rule\n",
    ],
    ['x.md', '---\nlicense: MIT\n---\n# Title\n', '---\nname: x\ndescription: Title\nlicense: MIT\n---\n# Title\n'],
    [
      'x.md',
      '---\nname: custom-name\n---\n## Sub\n# Real title ##\n',
      '---\ndescription: Real title\nname: custom-name\n---\n## Sub\n# Real title ##\n',
    ],
    [
      'x.md',
      '---\r\nlicense: MIT\r\n---\r\n# T\r\n',
      '---\r\nname: x\r\ndescription: T\r\nlicense: MIT\r\n---\r\n# T\r\n',
    ],
    ['Über Notes.md', '# Fine\n', '---\nname: uber-notes\ndescription: Fine\n---\n# Fine\n'],
  ])('%s %j', (file, text, expected) => {
    const result = planSkillFile(file, text);
    expect(result).toMatchObject({ ok: true, text: expected });
  });

  const claudeKeys =
    '---\nname: x\ndescription: d\nuser-invocable: true\ndisable-model-invocation: false\nargument-hint: "[file]"\nallowed-tools:\n  - Read\n  - Bash(git diff *)\nmodel: sonnet\ncontext: fork\nagent: Explore\nversion: 1.0.0\nhooks:\n  Stop: []\n---\nBody\n';

  it('keeps the keys Claude Code defines, as written, for .claude/skills/ only', () => {
    expect(planSkillFile('x.md', claudeKeys, [CLAUDE_CODE_RULES])).toEqual({
      ok: true,
      name: 'x',
      text: claudeKeys,
      filled: [],
    });
    for (const rules of [[AGENT_SKILLS_RULES], [CLAUDE_CODE_RULES, AGENT_SKILLS_RULES]]) {
      const result = planSkillFile('x.md', claudeKeys, rules);
      expect(result.ok ? [] : result.problems).toEqual([
        'frontmatter keys not allowed by Agent Skills: user-invocable, disable-model-invocation, argument-hint, model, context, agent, version, hooks (allowed: name, description, license, allowed-tools, metadata, compatibility); user-invocable, disable-model-invocation, argument-hint, model, context, agent, version, hooks are Claude Code keys, kept only in .claude/skills/ (--agent claude)',
      ]);
    }
  });

  it('refuses keys Claude Code does not define either, even for .claude/skills/', () => {
    const result = planSkillFile('x.md', '---\nname: x\ndescription: d\ntags: [a]\n---\n', [CLAUDE_CODE_RULES]);
    expect(result.ok ? [] : result.problems).toEqual([
      'frontmatter keys neither Agent Skills nor Claude Code define: tags (put your own fields under `metadata:`)',
    ]);
  });

  it('keeps a file whose frontmatter is complete byte for byte', () => {
    const text =
      '---\nname:   "kept"\ndescription: >-\n  Folded text\nmetadata:\n  author: me\n---\nBody without heading\n';
    expect(planSkillFile('other.md', text)).toEqual({ ok: true, name: 'kept', text, filled: [] });
  });

  it.each([
    [
      '日本語.md',
      '# Fine\n',
      /the file name "日本語.md" has no letters a-z or digits to make a skill name of: add `name: your-skill-name`/,
    ],
    ['😀.md', '# Fine\n', /the file name "😀.md" has no letters a-z or digits/],
    ['---.md', '# Fine\n', /has no letters a-z or digits/],
    [`${'a'.repeat(65)}.md`, '# Fine\n', /1–64 characters \(it has 65\)/],
    ['ok.md', '# Use <b>bold</b>\n', /must not contain "<" or ">"/],
    ['ok.md', 'No heading at all.\n', /no description/],
    ['ok.md', '```\n# in a code block\n```\n', /no description/],
    ['ok.md', `# ${'x'.repeat(1100)}\n`, /at most 1024 characters/],
    ['ok.md', '---\nname: Bad_Name\n---\n# T\n', /may hold only lowercase[^]*write it as `name: bad-name`/],
    [
      'ok.md',
      '---\nname: Résumé\n---\n# T\n',
      /name "Résumé" may hold only lowercase letters a-z, digits and hyphens\nwrite it as `name: resume`/,
    ],
    [
      'ok.md',
      '---\nname: 日本語\n---\n# T\n',
      /^name "日本語" may hold only lowercase letters a-z, digits and hyphens$/,
    ],
    [
      'ok.md',
      '---\nuser-invocable: true\n---\n# T\n',
      /not allowed by Agent Skills: user-invocable .*; user-invocable is a Claude Code key, kept only in .claude\/skills\/ \(--agent claude\)/,
    ],
    ['ok.md', '---\nname: a--b\n---\n# T\n', /two hyphens/],
    ['ok.md', '---\nname: -a\n---\n# T\n', /start or end with a hyphen/],
    ['ok.md', '---\ndescription: ""\n---\n# T\n', /must not be empty/],
    ['ok.md', '---\ndescription: 2024-01-01\n---\n', /description must be a string, not a date/],
    ['ok.md', '---\ntags: [a]\nauthor: me\n---\n# T\n', /keys not allowed by Agent Skills: tags, author/],
    ['ok.md', '---\n- a list\n---\n# T\n', /must be a YAML mapping/],
    ['ok.md', '---\nname: [unclosed\n---\n# T\n', /not valid YAML/],
  ])('refuses %s %j with the reason', (file, text, reason) => {
    const result = planSkillFile(file, text);
    expect(result.ok).toBe(false);
    expect(result.ok ? [] : result.problems.join('\n')).toMatch(reason);
  });
});

describe('pieces', () => {
  it.each([
    ['My Review Notes.md', 'my-review-notes'],
    ['dir/sub/camelCaseName.md', 'camel-case-name'],
    ['snake_case.markdown', 'snake-case'],
    ['v2 notes.md', 'v2-notes'],
    ['README', 'readme'],
    ['Ünïcode Nötes.md', 'unicode-notes'],
    ['Ünïcode Nötes.md'.normalize('NFD'), 'unicode-notes'],
    ['Crème Brûlée.md', 'creme-brulee'],
    ['Straße Æsir Łódź.md', 'strasse-aesir-lodz'],
    ['Ｗide ﬁle.md', 'wide-file'],
    ['Résumé helper.md', 'resume-helper'],
    ['日本語 Notes.md', 'notes'],
    ['Notes—日本語—v2 😀.md', 'notes-v2'],
    ['café_au_lait.md', 'cafe-au-lait'],
    ['日本語.md', ''],
  ])('nameFromFileName(%s) → %s', (file, name) => {
    expect(nameFromFileName(file)).toBe(name);
  });

  it.each([
    ['# A\n# B', 'A'],
    ['## Sub\n# Main', 'Main'],
    ['#NoSpace\n# Yes', 'Yes'],
    ['~~~\n# no\n~~~\n# yes', 'yes'],
    ['````\n```\n# no\n````\n# yes', 'yes'],
    ['   # Indented three  ', 'Indented three'],
    ['    # four spaces is code', undefined],
  ])('firstHeading(%j) → %s', (md, heading) => {
    expect(firstHeading(md)).toBe(heading);
  });

  it.each([
    ['a', []],
    ['a-b-1', []],
    ['x'.repeat(64), []],
    ['', ['1–64']],
    ['A', ['lowercase']],
    ['a b', ['lowercase']],
    ['a-', ['hyphen']],
    ['a--b', ['two hyphens']],
  ])('checkSkillName(%j)', (name, fragments) => {
    const problems = checkSkillName(name);
    expect(problems).toHaveLength(fragments.length);
    fragments.forEach((f, i) => expect(problems[i]).toContain(f));
  });

  it.each([
    ['ok', 0],
    ['   ', 1],
    ['x'.repeat(1024), 0],
    ['x'.repeat(1025), 1],
    ['a > b', 1],
    [42, 1],
  ])('checkSkillDescription(%j) has %i problems', (d, n) => {
    expect(checkSkillDescription(d)).toHaveLength(n);
  });

  it('requires the name to equal the folder name', () => {
    expect(checkSkill({ name: 'a', description: 'd' }, 'b')).toEqual(['name "a" must equal its folder name "b"']);
    expect(
      checkSkill(
        { name: 'a', description: 'd', license: 'MIT', 'allowed-tools': 'Bash', metadata: {}, compatibility: 'x' },
        'a',
      ),
    ).toEqual([]);
  });

  it.each([
    ['claude', ['claude']],
    ['claude,agents', ['claude', 'agents']],
    [' agents , claude,agents', ['agents', 'claude']],
  ])('parseAgents(%j)', (list, agents) => {
    expect(parseAgents(list)).toEqual(agents);
  });

  it.each(['codex', '', 'claude,nope'])('parseAgents(%j) is a usage error (exit 1)', (list) => {
    expect(() => parseAgents(list)).toThrow(expect.objectContaining({ exitCode: 1 }));
  });

  it('skillFilesFor puts one SKILL.md in each agent folder', () => {
    const out = skillFilesFor('Review.md', '# Review\n', ['claude', 'agents'], 'user');
    expect(out.ok && out.files.map((f) => f.path)).toEqual([
      '.claude/skills/review/SKILL.md',
      '.agents/skills/review/SKILL.md',
    ]);
  });

  it.each([
    [true, true, false, false, true],
    [false, true, false, false, false],
    [true, false, false, false, false],
    [true, true, true, false, false],
    [true, true, false, true, false],
  ])('canPrompt(stdin TTY %s, stdout TTY %s, --yes %s, --json %s) → %s', (stdinTTY, stdoutTTY, yes, json, expected) => {
    expect(canPrompt({ stdinTTY, stdoutTTY, yes, json })).toBe(expected);
  });
});
