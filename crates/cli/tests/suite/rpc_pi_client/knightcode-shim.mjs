// The `cliPath` pi's RpcClient runs with `node`: runs the knightcode binary named by
// KC_RPC_BIN with the same arguments on the same stdio, passes on the signals that stop it,
// and exits as it exits.
import { spawn } from "node:child_process";

const child = spawn(process.env.KC_RPC_BIN, process.argv.slice(2), { stdio: "inherit" });
for (const signal of ["SIGTERM", "SIGHUP", "SIGINT"]) {
    process.on(signal, () => child.kill(signal));
}
child.on("error", (error) => {
    process.stderr.write(`knightcode-shim: cannot run ${process.env.KC_RPC_BIN}: ${error.message}\n`);
    process.exit(127);
});
child.on("exit", (code, signal) => {
    process.exit(code ?? 128 + ({ SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 }[signal] ?? 0));
});
