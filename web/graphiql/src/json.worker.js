// The JSON language worker of the variables and headers editors.
import 'monaco-editor/esm/vs/language/json/json.worker.js';
