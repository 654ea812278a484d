fn main() {
    println!("tilescope");
}
