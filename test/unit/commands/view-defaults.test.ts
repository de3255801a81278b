// `ralphkit view` declares its option defaults without loading the server (so start-up stays light);
// they must be the server's own.
import { describe, expect, it } from 'vitest';
import { VIEW_DEFAULT_HOST, VIEW_DEFAULT_PORT } from '../../../src/commands/view.js';
import { DEFAULT_HOST, DEFAULT_PORT } from '../../../src/view/server.js';

describe('ralphkit view defaults', () => {
  it("are the server's DEFAULT_PORT and DEFAULT_HOST", () => {
    expect(VIEW_DEFAULT_PORT).toBe(DEFAULT_PORT);
    expect(VIEW_DEFAULT_HOST).toBe(DEFAULT_HOST);
  });
});
