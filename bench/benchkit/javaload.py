"""bench/javaload, the Java-driver load program: resolved by Maven, compiled by javac, run by java.

`command()` gives the argv prefix that runs it (its words follow, as `helenus stress`'s do). The
classpath Maven resolves and the compiled classes are kept in bench/javaload/target/ until pom.xml
or a source changes. Maven runs offline first (~/.m2 already holds everything), and only when that
fails fetches the dependencies once (`dependency:go-offline`) from Maven Central."""
import glob
import os
import shutil
import subprocess

DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "javaload")
TARGET = os.path.join(DIR, "target")
CLASSPATH = os.path.join(TARGET, "classpath.txt")
CLASSES = os.path.join(TARGET, "classes")
# The driver logs through slf4j-simple: warnings and errors only, on stderr.
JVM_FLAGS = ["-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-XX:+UseParallelGC", "-Xmx512m"]


class JavaLoadError(RuntimeError):
    pass


def missing_tools():
    return [t for t in ("java", "javac", "mvn") if shutil.which(t) is None]


def _newer(path, sources):
    return os.path.exists(path) and all(os.path.getmtime(path) >= os.path.getmtime(s) for s in sources)


def _mvn(*words, offline, timeout):
    argv = ["mvn", "-q", "-B", *(["-o"] if offline else []), *words]
    try:
        return subprocess.run(argv, cwd=DIR, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return subprocess.CompletedProcess(argv, 1, "", f"timed out after {timeout}s")


def _classpath(log):
    pom = os.path.join(DIR, "pom.xml")
    if _newer(CLASSPATH, [pom]):
        with open(CLASSPATH) as f:
            cp = f.read().strip()
        if all(os.path.exists(j) for j in cp.split(os.pathsep)):
            return cp
    resolve = ("dependency:build-classpath", f"-Dmdep.outputFile={CLASSPATH}")
    r = _mvn(*resolve, offline=True, timeout=180)
    if r.returncode != 0:
        log("javaload: fetching the Java driver from Maven Central (mvn dependency:go-offline)")
        r = _mvn("dependency:go-offline", offline=False, timeout=600)
        if r.returncode == 0:
            r = _mvn(*resolve, offline=True, timeout=180)
    if r.returncode != 0:
        raise JavaLoadError("maven could not resolve the Java driver:\n" + (r.stdout + r.stderr)[-2000:])
    with open(CLASSPATH) as f:
        return f.read().strip()


def command(log):
    """Builds bench/javaload if needed and returns the argv prefix that runs it."""
    missing = missing_tools()
    if missing:
        raise JavaLoadError(f"the Java client needs {', '.join(missing)} on PATH")
    cp = _classpath(log)
    sources = sorted(glob.glob(os.path.join(DIR, "src", "*.java")))
    if not _newer(os.path.join(CLASSES, "JavaLoad.class"), sources + [CLASSPATH]):
        log("javaload: compiling bench/javaload/src with javac")
        r = subprocess.run(["javac", "-d", CLASSES, "-cp", cp, *sources], capture_output=True, text=True,
                           timeout=300)
        if r.returncode != 0:
            raise JavaLoadError("javac failed:\n" + (r.stdout + r.stderr)[-2000:])
    return ["java", *JVM_FLAGS, "-cp", CLASSES + os.pathsep + cp, "JavaLoad"]
