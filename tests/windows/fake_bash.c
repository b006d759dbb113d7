/* A stand-in for Git for Windows' bash.exe, for the smoke suite's run_shell
 * checks under Wine (which has no Git Bash). It understands two commands:
 *   bash.exe -c "echo TEXT"    prints TEXT, exits 0;
 *   bash.exe -c "tree MARKER"  starts a child (bash.exe --sleep MARKER)
 *                              that starts a grandchild the same way, then
 *                              sleeps: a process tree for the timeout to end;
 *                              each of the three appends its pid to
 *                              MARKER.pids in the folder it started in.
 * Anything else exits 127, as bash does for an unknown command. */
#include <windows.h>
#include <stdio.h>
#include <string.h>

static void note_pid(const char *marker)
{
    char name[MAX_PATH];
    FILE *pids;
    snprintf(name, sizeof name, "%s.pids", marker);
    pids = fopen(name, "a");
    if (pids) {
        fprintf(pids, "%lu\n", (unsigned long)GetCurrentProcessId());
        fclose(pids);
    }
}

static void start_sleeper(const char *marker, int depth)
{
    char self[MAX_PATH], line[2 * MAX_PATH];
    STARTUPINFOA si = { sizeof si };
    PROCESS_INFORMATION pi;
    GetModuleFileNameA(NULL, self, sizeof self);
    snprintf(line, sizeof line, "\"%s\" --sleep %s %d", self, marker, depth);
    if (CreateProcessA(self, line, NULL, NULL, FALSE, 0, NULL, NULL, &si, &pi)) {
        CloseHandle(pi.hThread);
        CloseHandle(pi.hProcess);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 4 && strcmp(argv[1], "--sleep") == 0) {
        note_pid(argv[2]);
        if (atoi(argv[3]) < 2)
            start_sleeper(argv[2], atoi(argv[3]) + 1);
        Sleep(INFINITE);
    }
    if (argc >= 3 && strcmp(argv[1], "-c") == 0) {
        if (strncmp(argv[2], "echo ", 5) == 0) {
            printf("%s\n", argv[2] + 5);
            return 0;
        }
        if (strncmp(argv[2], "tree ", 5) == 0) {
            note_pid(argv[2] + 5);
            start_sleeper(argv[2] + 5, 1);
            Sleep(INFINITE);
        }
    }
    fprintf(stderr, "bash: %s: command not found\n", argc >= 3 ? argv[2] : "");
    return 127;
}
