// The editor's own web worker (monaco), a bundle of its own.
import 'monaco-editor/esm/vs/editor/editor.worker.js';
