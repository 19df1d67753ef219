// Preloaded (node --require) by the tests: every listening socket binds to 127.0.0.1 only,
// whatever host the server asks for, so the npm reference server never listens beyond loopback.
const net = require("net");
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || (typeof args[0] === "string" && /^\d+$/.test(args[0]))) {
    const rest = args.slice(1).filter((arg) => typeof arg !== "string");
    return listen.call(this, Number(args[0]), "127.0.0.1", ...rest);
  }
  if (args[0] && typeof args[0] === "object" && "port" in args[0]) {
    return listen.call(this, { ...args[0], host: "127.0.0.1" }, ...args.slice(1));
  }
  return listen.apply(this, args);
};
