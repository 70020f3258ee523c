// Renders /openapi.json with Redoc; kept out of the page so that the
// Content-Security-Policy needs no inline script.
Redoc.init('/openapi.json', {
  expandResponses: '200,201',
  jsonSampleExpandLevel: 3,
  hideDownloadButton: false,
  sortTagsAlphabetically: false,
}, document.getElementById('redoc'));
