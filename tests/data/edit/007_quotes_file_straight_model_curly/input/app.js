const greeting = "hello";
const name = 'it\'s me';
