package load
import ("testing";"cuelang.org/go/cue/cuecontext";"cuelang.org/go/cue/load";"path/filepath")
func TestDbgAlone(t *testing.T) {
	abs := "/tmp/bt/workloads/loops.cue"
	root, _ := findModuleRoot(filepath.Dir(abs))
	insts := load.Instances([]string{abs}, &load.Config{Dir: root, ModuleRoot: root})
	t.Log(insts[0].Err)
	v := cuecontext.New().BuildInstance(insts[0])
	t.Log(v.Err())
}
