// The only module that imports change-case.
import { kebabCase } from 'change-case';

/** Latin letters that Unicode does not decompose into a base letter and a mark (capitals stay one word: Æsir → Aesir). */
const LETTERS_WITHOUT_DECOMPOSITION: Readonly<Record<string, string>> = {
  ß: 'ss',
  æ: 'ae',
  Æ: 'Ae',
  œ: 'oe',
  Œ: 'Oe',
  ø: 'o',
  Ø: 'O',
  ł: 'l',
  Ł: 'L',
  đ: 'd',
  Đ: 'D',
  ð: 'd',
  Ð: 'D',
  þ: 'th',
  Þ: 'Th',
  ı: 'i',
};

/**
 * `Ünïcode Nötes` → `Unicode Notes`: compatibility decomposition splits accented letters (and forms
 * like `ﬁ` or full-width `Ｗ`) into plain ones plus combining marks, which are then dropped. Scripts
 * without a Latin spelling (日本語) are left as they are.
 */
export function stripDiacritics(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/[ßæÆœŒøØłŁđĐðÐþÞı]/g, (c) => LETTERS_WITHOUT_DECOMPOSITION[c]);
}

/** `My Review Notes` → `my-review-notes`, `myReviewNotes` → `my-review-notes`, `Ünïcode Nötes` → `unicode-notes`. */
export function toKebabCase(text: string): string {
  return kebabCase(stripDiacritics(text));
}

/**
 * A skill name (SPEC §3: a-z, 0-9, single hyphens) made of any text: `Résumé helper` → `resume-helper`.
 * Letters with a Latin spelling become it (stripDiacritics); whatever is still not a-z or 0-9 (日本語, 😀)
 * becomes a hyphen, and hyphens are then collapsed and trimmed, so the result may be empty.
 */
export function toSkillName(text: string): string {
  return toKebabCase(text)
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}
