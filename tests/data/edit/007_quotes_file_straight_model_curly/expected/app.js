const greeting = "goodbye";
const name = 'it\'s me';
