import { describe, expect, it } from 'vitest';
import { needsShellQuoting, shellQuote } from '../../../src/util/shell-quote.js';
import { quoteArg } from '../../../src/util/invocation.js';

describe('shellQuote', () => {
  it.each([
    ['ralph/feature', 'ralph/feature'],
    ['US-1.2_b', 'US-1.2_b'],
    ['refs/heads/a@b', 'refs/heads/a@b'],
    ['ralph/.runs/x', 'ralph/.runs/x'],
    ['ralph/x$(touch pwned)', "'ralph/x$(touch pwned)'"],
    ['ralph/`id`', "'ralph/`id`'"],
    ['a;b', "'a;b'"],
    ['a&b|c', "'a&b|c'"],
    ['a>b', "'a>b'"],
    ["it's", "'it'\\''s'"],
    ['"$HOME"', `'"$HOME"'`],
    ['my folder', "'my folder'"],
    ['~/x', "'~/x'"],
    ['*', "'*'"],
    ['a{b,c}', "'a{b,c}'"],
    ['!!', "'!!'"],
    ['#x', "'#x'"],
    ['=ls', "'=ls'"],
    ['back\\slash', "'back\\slash'"],
    ['new\nline', "'new\nline'"],
    ['', "''"],
  ])('%j → %s', (value, quoted) => {
    expect(shellQuote(value)).toBe(quoted);
    expect(needsShellQuoting(value)).toBe(quoted !== value);
  });

  it('quoteArg (how a hint names the ralphkit CLI) quotes with it outside Windows', () => {
    expect(quoteArg('/home/me/a$(id)/bin/ralphkit.js', 'linux')).toBe("'/home/me/a$(id)/bin/ralphkit.js'");
    expect(quoteArg('/home/me/a\\b/ralphkit.js', 'darwin')).toBe("'/home/me/a\\b/ralphkit.js'");
  });
});
