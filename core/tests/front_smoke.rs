mod common;
#[test]
fn smoke() {
    println!("{}", common::diagnose(common::SOFTMAX));
    for k in common::EXTRA_KERNELS {
        println!("{}", common::diagnose(k));
    }
    println!("{}", common::diagnose("kernel k(x: f32[4]) {\n\tlet t = load q[0 .. 4];\n let u = 1 ++ ; let v = $ ; }\nconst = 3;"));
}
