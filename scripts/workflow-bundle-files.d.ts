export declare const projectRoot: string;
export declare const workflowEntry: string;
export declare function workflowBundleFiles(entry?: string): string[];
