/** Minimal declarations for html-to-text 10 (ships no types): only what src/mail/body.ts uses. */
declare module 'html-to-text' {
  export interface DomNode {
    type?: string;
    name?: string;
    attribs?: Record<string, string>;
    children?: DomNode[];
    data?: string;
  }

  export interface BlockTextBuilder {
    addInline(str: string, options?: { noWordTransform?: boolean }): void;
    pushWordTransform(transform: (word: string) => string): void;
    popWordTransform(): void;
  }

  export type RecursiveCallback = (nodes: DomNode[] | undefined, builder: BlockTextBuilder) => void;

  export type FormatCallback = (
    elem: DomNode,
    walk: RecursiveCallback,
    builder: BlockTextBuilder,
    formatOptions: Record<string, unknown>,
  ) => void;

  export interface SelectorDefinition {
    selector: string;
    format?: string;
    options?: Record<string, unknown>;
  }

  export interface HtmlToTextOptions {
    baseElements?: { selectors?: string[]; returnDomByDefault?: boolean };
    decodeEntities?: boolean;
    formatters?: Record<string, FormatCallback>;
    limits?: { maxInputLength?: number; maxDepth?: number; maxChildNodes?: number; ellipsis?: string };
    preserveNewlines?: boolean;
    selectors?: SelectorDefinition[];
    whitespaceCharacters?: string;
    wordwrap?: number | false | null;
  }

  export function compile(options?: HtmlToTextOptions): (html: string, metadata?: unknown) => string;
  export function convert(html: string, options?: HtmlToTextOptions, metadata?: unknown): string;
}
