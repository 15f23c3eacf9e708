// Types for scripts/structure.mjs, so the unit test can call the check (the script itself stays plain Node).

export interface Layer {
  readonly name: string;
  readonly folders: readonly string[];
  readonly why: string;
}

export interface FoundImport {
  readonly from: string;
  readonly specifier: string;
  readonly typeOnly: boolean;
  readonly line: number;
  /** The source file imported, when it is one under the source folder. */
  readonly to?: string;
  /** A package or builtin. */
  readonly external?: string;
  readonly unresolved?: true;
  readonly outside?: string;
}

export interface SourceGraph {
  readonly files: readonly string[];
  readonly imports: readonly FoundImport[];
}

export interface UpwardImport extends FoundImport {
  readonly fromLayer: string;
  readonly toLayer: string;
}

export interface ImportCycle {
  readonly files: readonly string[];
  readonly path: readonly string[];
  readonly typeOnly?: true;
}

export interface StructureResult extends SourceGraph {
  readonly layers: readonly Layer[];
  readonly unplaced: readonly string[];
  readonly unresolved: readonly FoundImport[];
  readonly upward: readonly UpwardImport[];
  readonly cycles: readonly ImportCycle[];
  readonly typeCycles: readonly ImportCycle[];
  readonly browserUnsafe: ReadonlyArray<{ readonly chain: readonly string[]; readonly external: string }>;
}

export const LAYERS: readonly Layer[];
export const BROWSER_FOLDERS: readonly string[];
export function folderOf(file: string): string | undefined;
export function collectImports(root: string, srcDir?: string): SourceGraph;
export function checkStructure(graph: SourceGraph, layers?: readonly Layer[]): StructureResult;
export function hasProblems(result: StructureResult): boolean;
export function describeProblems(result: StructureResult): string[];
export function describeWarnings(result: StructureResult): string[];
export function renderStructureDoc(result: StructureResult): string;
