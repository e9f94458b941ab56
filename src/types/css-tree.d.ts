/** Minimal declarations for css-tree 3 (ships no types): the parser entry src/mail/css-hidden.ts uses. */
declare module 'css-tree/parser' {
  export interface CssList<T> {
    toArray(): T[];
  }

  export interface CssNode {
    type: string;
    name?: string;
    value?: string | CssNode;
    unit?: string;
    property?: string;
    important?: boolean | string;
    children?: CssList<CssNode> | null;
    prelude?: CssNode | null;
    block?: CssNode | null;
    modifier?: string | null;
    mediaType?: string | null;
    condition?: CssNode | null;
    left?: CssNode | null;
    leftComparison?: string | null;
    middle?: CssNode | null;
    rightComparison?: string | null;
    right?: CssNode | null;
  }

  export interface ParseOptions {
    context?: 'stylesheet' | 'declarationList' | 'value';
    parseRulePrelude?: boolean;
    parseValue?: boolean;
    parseCustomProperty?: boolean;
    positions?: boolean;
    onParseError?: (error: Error) => void;
  }

  const parse: (source: string, options?: ParseOptions) => CssNode;
  export default parse;
}

declare module 'color-name' {
  const colors: Record<string, [number, number, number]>;
  export default colors;
}
