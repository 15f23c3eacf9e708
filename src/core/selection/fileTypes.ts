/**
 * What a file named in a prompt is, in the words tools use for it.
 *
 * People name files ("gs://trip/menu_kyoto.jpg", "~/reports/q3.xlsx"); tools describe what they handle
 * ("image detection and annotation", "read a spreadsheet"). A file's extension says its media type, a
 * standard fact that holds for any catalogue, so the words of that type are added to the text ranked
 * against the lexical ranker: `menu_kyoto.jpg` also says "image photo", for prompts that name a .jpg and
 * never the word "image". Pure: no I/O, no vscode.
 */

/**
 * Extensions by the words of their media type (common types of the IANA media type registry). Only media
 * that need a tool of their own: plain text, markdown, CSV and JSON are what file tools read and write,
 * and naming them "text" pulled other tools up.
 */
const MEDIA_WORDS: ReadonlyArray<readonly [string, readonly string[]]> = [
  ['image photo', ['jpg', 'jpeg', 'png', 'gif', 'webp', 'heic', 'heif', 'bmp', 'tif', 'tiff', 'svg', 'ico', 'raw']],
  ['audio', ['mp3', 'wav', 'flac', 'ogg', 'm4a', 'aac', 'opus']],
  ['video', ['mp4', 'mov', 'mkv', 'avi', 'webm', 'm4v']],
  ['document pdf', ['pdf']],
  ['document', ['doc', 'docx', 'odt', 'rtf', 'pages']],
  ['spreadsheet', ['xls', 'xlsx', 'ods', 'numbers']],
  ['presentation slides', ['ppt', 'pptx', 'odp', 'key']],
];

const WORDS_BY_EXTENSION: ReadonlyMap<string, string> = new Map(MEDIA_WORDS.flatMap(([words, extensions]) => extensions.map((e) => [e, words] as const)));

/** A file name or path ending in an extension: `menu.jpg`, `~/a/b.tar.gz`, `gs://x/y.PNG`. */
const FILE_NAME = /[\p{L}\p{N}_~\-./:]*[\p{L}\p{N}_-]\.([a-z0-9]{1,8})(?![\p{L}\p{N}])/giu;

/** The media-type words of the files a text names, each once, in order of appearance ('' when none). */
export function fileTypeWords(text: string): string {
  const out: string[] = [];
  for (const m of text.matchAll(FILE_NAME)) {
    const words = WORDS_BY_EXTENSION.get(m[1]!.toLowerCase());
    if (words && !out.includes(words)) out.push(words);
  }
  return out.join(' ');
}
