import {
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ActionLog } from '../../src/policy/action-log.js';
import { downloadsFor, resolveDownloadDir, sanitizeFileName, withSuffix } from '../../src/store/downloads.js';
import type { SaveRequest } from '../../src/store/downloads.js';
import { tempDir } from '../helpers/temp.js';

let root: string;
let dir: string;
let outside: string;
let log: ActionLog;

beforeEach(() => {
  root = tempDir('mailwarden-dl-');
  dir = join(root, 'downloads');
  outside = join(root, 'outside');
  for (const d of [dir, outside]) mkdirSync(d);
  log = new ActionLog(join(root, 'config', 'action-log.jsonl'));
});

const request = (name: string, text = 'hello'): SaveRequest => ({
  name,
  fallbackName: 'fallback.bin',
  data: Buffer.from(text),
  account: 'test',
  op: 'saveAttachment',
  threadIds: ['t1'],
  messageIds: ['m1'],
});

const logLines = (): Array<Record<string, unknown>> =>
  readFileSync(log.path, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('sanitizeFileName', () => {
  it.each([
    ['../../etc/passwd', 'etc_passwd'],
    ['..\\..\\windows\\system32', 'windows_system32'],
    ['/abs/path.txt', 'abs_path.txt'],
    ['.bashrc', 'bashrc'],
    ['-rf', '_rf'],
    ['report\u202Efdp.exe', 'reportfdp.exe'],
    ['zero\u200Bwidth\u0000nul\u0007bell.txt', 'zerowidthnulbell.txt'],
    ['tag\u{E0041}\u{E0042}s.txt', 'tags.txt'],
    ['a:b*c?d"e<f>g|h.txt', 'a_b_c_d_e_f_g_h.txt'],
    ['CON.txt', '_CON.txt'],
    ['name. . .', 'name'],
    ['multi\n\tline  name.csv', 'multi line name.csv'],
    ['..', ''],
    ['', ''],
  ])('%j → %j', (raw, want) => {
    expect(sanitizeFileName(raw)).toBe(want);
  });

  it('caps long names at 200 bytes and keeps the extension', () => {
    const s = sanitizeFileName(`${'é'.repeat(300)}.tar.gz`);
    expect(Buffer.byteLength(s)).toBeLessThanOrEqual(200);
    expect(s.endsWith('.tar.gz')).toBe(true);
    expect(s).not.toContain('\uFFFD');
  });

  it('numbers before the extension', () => {
    expect(withSuffix('report.pdf', 1)).toBe('report (1).pdf');
    expect(withSuffix('logs.tar.gz', 2)).toBe('logs (2).tar.gz');
    expect(withSuffix('README', 3)).toBe('README (3)');
  });
});

describe('resolveDownloadDir', () => {
  it('refuses when MAILWARDEN_DOWNLOAD_DIR is unset, saying how to set it', async () => {
    await expect(resolveDownloadDir(undefined)).rejects.toMatchObject({
      code: 'forbidden_operation',
      message: expect.stringMatching(/MAILWARDEN_DOWNLOAD_DIR/),
    });
    await expect(resolveDownloadDir('  ')).rejects.toMatchObject({ code: 'forbidden_operation' });
  });

  it('refuses a relative path, a missing directory and a file', async () => {
    await expect(resolveDownloadDir('downloads')).rejects.toMatchObject({ message: /absolute/ });
    await expect(resolveDownloadDir(join(root, 'nope'))).rejects.toMatchObject({ message: /does not exist/ });
    writeFileSync(join(root, 'file'), 'x');
    await expect(resolveDownloadDir(join(root, 'file'))).rejects.toMatchObject({
      message: /not a directory/,
    });
  });

  it('resolves a symlinked directory to its real path', async () => {
    symlinkSync(dir, join(root, 'link'));
    expect(await resolveDownloadDir(join(root, 'link'))).toBe(await resolveDownloadDir(dir));
  });
});

describe('downloadsFor().save', () => {
  it('writes 0600 inside the directory and logs it', async () => {
    const saved = await downloadsFor(dir, log, 'download_attachment').save(request('../x/report.csv'));
    expect(saved.fileName).toBe('x_report.csv');
    expect(saved.path).toBe(join(saved.directory, 'x_report.csv'));
    expect(readFileSync(saved.path, 'utf8')).toBe('hello');
    expect(statSync(saved.path).mode & 0o777).toBe(0o600);
    expect(logLines()).toEqual([
      expect.objectContaining({
        tool: 'download_attachment',
        op: 'saveAttachment',
        account: 'test',
        outcome: 'ok',
        threadIds: ['t1'],
        messageIds: ['m1'],
        detail: expect.objectContaining({ fileName: 'x_report.csv', bytes: 5, sha256: saved.sha256 }),
      }),
    ]);
  });

  it('never overwrites: an existing name gets "(1)", "(2)"…', async () => {
    writeFileSync(join(dir, 'a.txt'), 'original');
    const d = downloadsFor(dir, log, 'download_attachment');
    const one = await d.save(request('a.txt', 'first'));
    const two = await d.save(request('a.txt', 'second'));
    expect([one.fileName, one.renamed, two.fileName]).toEqual(['a (1).txt', true, 'a (2).txt']);
    expect(readFileSync(join(dir, 'a.txt'), 'utf8')).toBe('original');
    expect(readFileSync(two.path, 'utf8')).toBe('second');
  });

  it('does not write through a symlink in the directory that points outside', async () => {
    const target = join(outside, 'victim.txt');
    writeFileSync(target, 'keep me');
    symlinkSync(target, join(dir, 'victim.txt'));
    symlinkSync(join(outside, 'planted.txt'), join(dir, 'planted.txt')); // dangling
    const d = downloadsFor(dir, log, 'download_attachment');
    const a = await d.save(request('victim.txt', 'attack'));
    const b = await d.save(request('planted.txt', 'attack'));
    expect(readFileSync(target, 'utf8')).toBe('keep me');
    expect(existsSync(join(outside, 'planted.txt'))).toBe(false);
    expect([a.fileName, b.fileName]).toEqual(['victim (1).txt', 'planted (1).txt']);
    expect(lstatSync(a.path).isSymbolicLink()).toBe(false);
    expect(readdirSync(outside)).toEqual(['victim.txt']);
  });

  it('uses the fallback name when nothing of the name survives', async () => {
    const saved = await downloadsFor(dir, log, 'x').save(request('\u202E..'));
    expect(saved.fileName).toBe('fallback.bin');
  });

  it('writes nothing when unset, and nothing when the action log cannot be written', async () => {
    await expect(downloadsFor(undefined, log, 'x').save(request('a.txt'))).rejects.toMatchObject({
      code: 'forbidden_operation',
    });
    writeFileSync(join(root, 'blocker'), '');
    const broken = new ActionLog(join(root, 'blocker', 'log.jsonl'));
    await expect(downloadsFor(dir, broken, 'x').save(request('a.txt'))).rejects.toMatchObject({
      code: 'internal_error',
    });
    expect(readdirSync(dir)).toEqual([]);
  });
});
