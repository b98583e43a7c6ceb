/**
 * The in-place YAML edits behind curator writes: an appended item or a set entry changes only
 * its own lines, whatever the file's style; shapes the splice cannot handle go through the
 * document model; anything that would change other data is refused.
 */
import { describe, expect, it } from 'vitest';
import { appendToSequence, editFrontmatter, InPlaceEditError, setTopLevel, splitFrontmatter } from '../content-files/yaml-edit.ts';

describe('appendToSequence', () => {
  it('adds the item after the last one at its indent, in the style of the item before it', () => {
    const source = '# registry\nitems:\n- name: "a"   # first\n  note: |\n    one\n      \n    two\n\n# trailer\nother: 1\n';
    expect(appendToSequence(source, ['items'], { name: 'b', note: 'three\nfour' })).toBe(
      '# registry\nitems:\n- name: "a"   # first\n  note: |\n    one\n      \n    two\n- name: "b"\n  note: |-\n    three\n    four\n\n# trailer\nother: 1\n',
    );
  });

  it('turns an empty flow list into a block list, changing only its key line', () => {
    expect(appendToSequence('key: k\ndispositions: []   \nend: 1\n', ['dispositions'], { kind: 'held' })).toBe(
      'key: k\ndispositions:\n  - kind: held\nend: 1\n',
    );
    expect(appendToSequence('models: [] # none yet\n', ['models'], 'm')).toContain('# none yet');
  });

  it("writes the new lines with the file's line ending", () => {
    expect(appendToSequence('list:\r\n  - a: 1\r\n    b: 2\r\nend: 1\r\n', ['list'], { a: 3, b: 4 })).toBe(
      'list:\r\n  - a: 1\r\n    b: 2\r\n  - a: 3\r\n    b: 4\r\nend: 1\r\n',
    );
  });

  it('appends to a nested list, and to a file without a final newline', () => {
    expect(appendToSequence('a:\n  b:\n    - 1', ['a', 'b'], 2)).toBe('a:\n  b:\n    - 1\n    - 2\n');
  });

  it('goes through the document model for a flow list with items, keeping comments', () => {
    const next = appendToSequence('# head\nlist: [a, b] # tail\n', ['list'], 'c');
    expect(next).toContain('# head');
    expect(next).toContain('# tail');
    expect(next).toContain('c');
  });

  it('refuses a path that is not a list, and YAML that does not parse', () => {
    expect(() => appendToSequence('list: 3\n', ['list'], 1)).toThrow(InPlaceEditError);
    expect(() => appendToSequence('list: [\n', ['list'], 1)).toThrow(/does not parse/);
  });
});

describe('setTopLevel', () => {
  it('replaces an entry in place, or adds it at the end of the mapping', () => {
    const source = 'id: X\nprovenance:\n  source: origin # theirs\nanswers: []\n';
    expect(setTopLevel(source, 'provenance', { source: 'ours' })).toBe('id: X\nprovenance:\n  source: ours\nanswers: []\n');
    expect(setTopLevel('id: X\nanswers: []\n', 'provenance', { source: 'ours' })).toBe('id: X\nanswers: []\nprovenance:\n  source: ours\n');
    expect(setTopLevel('id: X\nnote: old\nz: 1\n', 'note', 'new')).toBe('id: X\nnote: new\nz: 1\n');
  });
});

describe('frontmatter', () => {
  it('edits the frontmatter and keeps the fences and the body byte for byte', () => {
    const source = '---\r\nid: X\r\nlist:\r\n  - 1\r\n---\r\n\r\n\r\nBody  \r\n  kept\r\n';
    expect(splitFrontmatter(source)).toEqual({ yaml: 'id: X\r\nlist:\r\n  - 1\r\n', rest: '---\r\n\r\n\r\nBody  \r\n  kept\r\n' });
    expect(editFrontmatter('---\nid: X\n---\nBody\n---\nnot a fence\n', (yaml) => `${yaml}added: 1\n`)).toBe(
      '---\nid: X\nadded: 1\n---\nBody\n---\nnot a fence\n',
    );
    expect(() => splitFrontmatter('id: X\n')).toThrow(/frontmatter fence/);
    expect(() => splitFrontmatter('---\nid: X\n')).toThrow(/closing fence/);
  });
});
