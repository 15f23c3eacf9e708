// Stands in for the browser in the conformance suite's sign-in scenarios: loads the authorization URL
// and follows its redirects (the suite's authorization server approves at once and redirects to the
// router's loopback listener with the code).
const response = await fetch(process.argv[2], { redirect: 'follow' });
await response.text();
